/// The directives of a `Cache-Control` field (RFC 9111 §5.2), request or response.
///
/// Names are case-insensitive; an argument is a token or a quoted string. A delta-seconds
/// argument that is not one (`max-age=1.5`, `max-age=-1`, `max-age=`) makes the directive
/// invalid: ``Seconds/invalid``, which a response's freshness counts as stale (RFC 9111 §4.2.1,
/// "considered stale"). A value past 2^31 seconds counts as 2^31 (§1.2.2). A directive given
/// twice keeps its first occurrence (§4.2.1).
public struct CacheControl: Sendable, Equatable {
    /// A delta-seconds argument.
    public enum Seconds: Sendable, Equatable {
        case value(Int64)
        case invalid

        /// The value in ms, or nil when invalid.
        public var ms: Int64? {
            if case .value(let s) = self { return s * 1000 }
            return nil
        }
    }

    /// Every directive as sent: lowercased name, argument (unquoted), in order, duplicates kept.
    public private(set) var directives: [(name: String, argument: String?)]

    public static func == (a: CacheControl, b: CacheControl) -> Bool {
        a.directives.elementsEqual(b.directives) { $0.name == $1.name && $0.argument == $1.argument }
    }

    /// The directives of `fields`' `Cache-Control` lines.
    public init(_ fields: HTTPFields) {
        // No field (most requests): nothing to split.
        self.init(fields["Cache-Control"] ?? "")
    }

    public init(_ text: String) {
        guard !text.isEmpty else {
            directives = []
            return
        }
        directives = HTTPFields.splitList(text).map { member in
            guard let equals = member.firstIndex(of: "=") else { return (member.lowercased(), nil) }
            let name = member[..<equals].trimmingBlanks().lowercased()
            var argument = String(member[member.index(after: equals)...]).trimmingBlanks()
            if argument.count >= 2, argument.hasPrefix("\""), argument.hasSuffix("\"") {
                argument = Self.unquoted(argument)
            }
            return (name, argument)
        }
    }

    /// Whether the directive is present (with or without an argument).
    public func has(_ name: String) -> Bool { directives.contains { $0.name == name } }

    /// The first occurrence's argument (nil when absent or given without one).
    public func argument(_ name: String) -> String? { directives.first { $0.name == name }?.argument ?? nil }

    /// The first occurrence of a delta-seconds directive; nil when absent.
    public func seconds(_ name: String) -> Seconds? {
        guard let first = directives.first(where: { $0.name == name }) else { return nil }
        guard let text = first.argument, !text.isEmpty, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return .invalid }
        // Past 2^31 seconds, 2^31 (RFC 9111 §1.2.2); more digits than an Int64 holds, the same.
        guard text.utf8.count <= 12, let value = Int64(text) else { return .value(Self.greatest) }
        return .value(min(value, Self.greatest))
    }

    /// 2^31 seconds, the greatest delta-seconds a cache must represent (RFC 9111 §1.2.2).
    public static let greatest: Int64 = 2_147_483_648

    // MARK: The directives a cache acts on

    public var noStore: Bool { has("no-store") }
    /// `no-cache` (a response's may name fields: `no-cache="Set-Cookie"`; those are qualified).
    public var noCache: Bool { has("no-cache") }
    /// `no-cache` with no field names: every reuse validates first.
    public var noCacheUnqualified: Bool { directives.contains { $0.name == "no-cache" && ($0.argument ?? "").isEmpty } }
    public var isPrivate: Bool { has("private") }
    /// `private` with no field names: a shared cache must not store the response.
    public var privateUnqualified: Bool { directives.contains { $0.name == "private" && ($0.argument ?? "").isEmpty } }
    public var isPublic: Bool { has("public") }
    public var mustRevalidate: Bool { has("must-revalidate") }
    public var proxyRevalidate: Bool { has("proxy-revalidate") }
    public var mustUnderstand: Bool { has("must-understand") }
    public var onlyIfCached: Bool { has("only-if-cached") }
    public var immutable: Bool { has("immutable") }
    public var maxAge: Seconds? { seconds("max-age") }
    public var sMaxAge: Seconds? { seconds("s-maxage") }
    public var minFresh: Seconds? { seconds("min-fresh") }
    /// `max-stale`: nil when absent; `.value(Int64.max)` (any staleness) when given without a value.
    public var maxStale: Seconds? {
        guard has("max-stale") else { return nil }
        if argument("max-stale") == nil { return .value(Int64.max / 1000) }
        return seconds("max-stale")
    }
    /// RFC 5861.
    public var staleWhileRevalidate: Seconds? { seconds("stale-while-revalidate") }
    public var staleIfError: Seconds? { seconds("stale-if-error") }

    /// The field names a qualified `no-cache="a, b"` or `private="a"` names, lowercased.
    public func fieldNames(of name: String) -> [String] {
        directives.filter { $0.name == name }.flatMap { HTTPFields.splitList($0.argument ?? "").map { $0.lowercased() } }
    }

    private static func unquoted(_ text: String) -> String {
        var out = ""
        var escaped = false
        for c in text.dropFirst().dropLast() {
            if escaped { out.append(c); escaped = false } else if c == "\\" { escaped = true } else { out.append(c) }
        }
        return out
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    func trimmingBlanks() -> String {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = firstIndex(where: { !isBlank($0) }), let end = lastIndex(where: { !isBlank($0) }) else { return "" }
        return String(self[start...end])
    }
}
