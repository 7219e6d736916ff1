@testable import CacheCore
@testable import CacheShell
import Testing

/// The timeline's ring (`Timeline`) keeps what a plain list of the last `limit` changes keeps:
/// the same changes in the same order, the same count of dropped ones, through `since` (a view
/// that then grows on its own) and `followed(by:)`, whether the ring has wrapped or not.
@Suite struct TimelineTests {
    /// The plain list the ring must agree with (count bound only: the values here are small).
    struct Model {
        var kept: [String] = []
        var dropped = 0

        mutating func append(_ key: String) {
            kept.append(key)
            if kept.count > Timeline.limit {
                kept.removeFirst()
                dropped += 1
            }
        }

        func since(_ index: Int) -> Model {
            var later = self
            later.kept.removeFirst(min(max(index - dropped, 0), kept.count))
            later.dropped = max(dropped - index, 0)
            return later
        }

        func followed(by later: Model) -> Model {
            var joined = self
            joined.dropped += later.dropped
            for key in later.kept { joined.append(key) }
            return joined
        }
    }

    static func event(_ n: Int) -> CacheEvent {
        CacheEvent(cause: .stored, key: "k:\(n)", at: Int64(n), state: .fresh, value: .int(Int64(n)), source: .cache)
    }

    static func expectSame(_ timeline: Timeline, _ model: Model, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(timeline.filter { _ in true }.map(\.key) == model.kept, sourceLocation: sourceLocation)
        #expect(timeline.dropped == model.dropped, sourceLocation: sourceLocation)
        #expect(timeline.appended == model.dropped + model.kept.count, sourceLocation: sourceLocation)
    }

    @Test func theRingKeepsWhatAListOfTheLastChangesKeeps() {
        var timeline = Timeline()
        var model = Model()
        var n = 0
        func append(_ count: Int, _ timeline: inout Timeline, _ model: inout Model) {
            for _ in 0..<count {
                timeline.append(Self.event(n))
                model.append("k:\(n)")
                n += 1
            }
        }
        Self.expectSame(timeline, model)
        append(3, &timeline, &model)
        Self.expectSame(timeline, model)
        // A view from before the ring is full, grown past the bound: the original is unchanged.
        var early = timeline.since(1)
        var earlyModel = model.since(1)
        append(Timeline.limit + 5, &early, &earlyModel)
        Self.expectSame(early, earlyModel)
        Self.expectSame(timeline, model)
        // The ring fills and wraps, over several turns.
        for count in [Timeline.limit - 3, 1, 2_500, Timeline.limit, 7_777] {
            append(count, &timeline, &model)
            Self.expectSame(timeline, model)
        }
        // Views from inside the kept changes, before them and after them, each grown again.
        for index in [0, model.dropped - 1, model.dropped, model.dropped + 1, model.dropped + 4_321,
                      model.dropped + model.kept.count - 1, model.dropped + model.kept.count, model.dropped + model.kept.count + 9] {
            var later = timeline.since(index)
            var laterModel = model.since(index)
            Self.expectSame(later, laterModel)
            append(6_000, &later, &laterModel)
            Self.expectSame(later, laterModel)
            Self.expectSame(timeline.followed(by: later), model.followed(by: laterModel))
        }
        Self.expectSame(timeline, model)
        Self.expectSame(Timeline().followed(by: timeline), Model().followed(by: model))
        Self.expectSame(early.followed(by: timeline.since(model.dropped + 17)), earlyModel.followed(by: model.since(model.dropped + 17)))
    }

    /// A view (`since`) counts only the bytes of the changes it shows against the byte limit:
    /// grown, it drops its oldest only when those are over it.
    @Test func aViewCountsOnlyTheBytesOfWhatItShows() {
        // One value of a fifth of the limit, shared by every change (held once in memory).
        let large = StoredValue(.string(String(repeating: "x", count: Timeline.byteLimit / 5)))
        func event(_ n: Int) -> CacheEvent {
            CacheEvent(cause: .stored, key: "k:\(n)", at: Int64(n), state: .fresh, stored: large, source: .cache)
        }
        var timeline = Timeline()
        for n in 0..<4 { timeline.append(event(n)) }
        #expect(timeline.filter { _ in true }.map(\.key) == ["k:0", "k:1", "k:2", "k:3"])
        var later = timeline.since(3)
        for n in 4..<7 { later.append(event(n)) }
        // Four fifths shown: nothing dropped. (Counting the three skipped, it dropped all but one.)
        #expect(later.filter { _ in true }.map(\.key) == ["k:3", "k:4", "k:5", "k:6"])
        #expect(later.dropped == 0)
        later.append(event(7))
        // Five fifths and a little (the keys, the quotes): over the limit, the oldest goes.
        #expect(later.filter { _ in true }.map(\.key) == ["k:4", "k:5", "k:6", "k:7"])
        #expect(later.dropped == 1)
    }
}
