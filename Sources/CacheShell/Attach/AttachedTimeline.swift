import CacheCore

/// The changes to an app's cache while shells are attached to it, for `timeline` and `explain`
/// over an attachment (SPEC §9): the inspector appends each change its tap hands it, inside the
/// app's call, and each shell sees those since it attached. Bounded as a session's timeline is
/// (the last 10,000 changes, at most 64 MiB of their values: SPEC §7.1).
public struct AttachedTimeline: Sendable {
    var timeline = Timeline()

    public init() {}

    /// How many changes were ever appended: a shell that attaches now sees those after it.
    public var appended: Int { timeline.appended }

    /// - Complexity: O(1) amortized.
    public mutating func append(_ event: CacheEvent) { timeline.append(event) }

    /// The changes a shell that attached once `index` changes had been appended sees.
    public func since(_ index: Int) -> AttachedTimeline {
        AttachedTimeline(timeline: timeline.since(index))
    }

    private init(timeline: Timeline) { self.timeline = timeline }
}
