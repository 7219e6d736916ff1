import CacheCore

/// The state a session began from (a `restore`, a store opened): a recording `--from-start`
/// starts with `restore {SNAPSHOT}` of it, inline. Kept as the decoded snapshot and made into
/// text only when first asked for: most sessions never record, and the text of a large cache
/// costs seconds.
struct BaseState {
    private var decoded: Snapshot?
    private var rendered: String?

    /// No state to begin from, or the given text.
    init(text: String? = nil) { rendered = text }

    /// A decoded snapshot, rendered when first asked for.
    init(decoded: Snapshot) { self.decoded = decoded }

    /// The pretty snapshot, ending in a newline; nil when there is none.
    var text: String? {
        mutating get {
            if rendered == nil, let snapshot = decoded {
                rendered = Session.documentText(snapshot.document(), newline: true)
                decoded = nil
            }
            return rendered
        }
    }
}
