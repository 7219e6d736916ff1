@testable import CacheCore
@testable import CacheShell
import Foundation
import Testing
import TestSupport

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

    /// Once the ring is full, each change appended takes the place of the oldest, and the bytes
    /// counted are those of the changes kept: a run of small changes that wrapped the ring
    /// several times leaves room for four large ones (the overwritten changes no longer count);
    /// a change that goes over the limit drops the oldest small ones, just enough of them; and a
    /// view from inside the full ring counts only what it shows.
    @Test func theByteBoundCountsTheChangesKeptOnceTheRingIsFull() {
        // A fifth of the limit and its quotes: five of them are over it.
        let large = StoredValue(.string(String(repeating: "x", count: Timeline.byteLimit / 5)))
        let small = StoredValue(.string(String(repeating: "y", count: 1_000)))
        let medium = StoredValue(.string(String(repeating: "z", count: 3_400_000)))
        var timeline = Timeline()
        var n = 0
        func event(_ value: StoredValue) -> CacheEvent {
            defer { n += 1 }
            return CacheEvent(cause: .stored, key: "k:\(n)", at: Int64(n), state: .fresh, stored: value, source: .cache)
        }
        func kept(_ timeline: Timeline) -> [CacheEvent] { timeline.filter { _ in true } }
        func bytes(_ events: [CacheEvent]) -> Int {
            events.reduce(0) { $0 + ($1.stored?.utf8Count ?? 0) + $1.key.utf8.count }
        }
        // (Every key from here on has five digits: a small change counts 1,002 + 7 bytes.)
        for _ in 0..<(3 * Timeline.limit + 17) { timeline.append(event(small)) }
        #expect(timeline.dropped == 2 * Timeline.limit + 17)
        // 9,996 small changes (about 10 MB) and four fifths of the limit: within it, each large
        // change taking one small one's place.
        for _ in 0..<4 { timeline.append(event(large)) }
        #expect(timeline.dropped == 2 * Timeline.limit + 21)
        #expect(kept(timeline).count == Timeline.limit && bytes(kept(timeline)) <= Timeline.byteLimit)
        // Over the limit by 63,224 bytes: the 63 oldest small changes go, just enough of them.
        timeline.append(event(medium))
        let afterMedium = kept(timeline)
        #expect(afterMedium.count == Timeline.limit - 63)
        #expect(afterMedium.suffix(5).map { $0.stored!.utf8Count } == [13_421_774, 13_421_774, 13_421_774, 13_421_774, 3_400_002])
        #expect(bytes(afterMedium) <= Timeline.byteLimit && bytes(afterMedium) > Timeline.byteLimit - 1_009)
        #expect(timeline.dropped + afterMedium.count == n)
        // A view of the last three large changes and the medium one counts their bytes alone:
        // one more large change fits, a second drops the view's oldest.
        var view = timeline.since(n - 4)
        view.append(event(large))
        #expect(view.dropped == 0 && kept(view).count == 5)
        view.append(event(large))
        #expect(view.dropped == 1 && kept(view).count == 5 && bytes(kept(view)) <= Timeline.byteLimit)
        // A fifth large change, the ring no longer full (9,937 changes kept): every small one
        // goes, and the oldest large one.
        timeline.append(event(large))
        #expect(kept(timeline).map { $0.stored!.utf8Count } == [13_421_774, 13_421_774, 13_421_774, 3_400_002, 13_421_774])
        // (The view's two changes took numbers of `n` too.)
        #expect(timeline.dropped + kept(timeline).count == n - 2)
        // More changes into slots the ring wrapped to without being full, each then dropped in
        // turn: the bytes counted for each are its own (four large ones and a medium one fit).
        for _ in 0..<6 { timeline.append(event(large)) }
        #expect(kept(timeline).map { $0.stored!.utf8Count } == [13_421_774, 13_421_774, 13_421_774, 13_421_774])
        timeline.append(event(medium))
        #expect(kept(timeline).map { $0.stored!.utf8Count } == [13_421_774, 13_421_774, 13_421_774, 13_421_774, 3_400_002])
        #expect(timeline.dropped + kept(timeline).count == n - 2)
    }
}

/// A batch keeps no timeline only when its script cannot read it (`TimelineUse`): a word that
/// reads it, or runs commands the script does not hold, anywhere in the script keeps it, across
/// the chunks a file is read in too; and a session that keeps none reports no change.
@Suite struct TimelineUseTests {
    @Test(arguments: [
        ("put a 1\nget a\n", false),
        ("put a 1\ntimeline a\n", true),
        ("at 1s explain a\n", true),
        ("source more.cachesh\n", true),
        ("restore snap.json\n", true),
        (#""time\u006cine" *"#, true),
        ("put sourceless 1\n", true),
        ("put a:1 {\"sauce\": \"tomato\"}\n", false),
        ("put a:1 {\"resource\": 1}\n", true),
        ("", false),
    ])
    func aScriptMayReadTheTimelineWhenItHoldsAWordThatCan(script: String, mayRead: Bool) {
        #expect(TimelineUse.mayRead(script) == mayRead)
    }

    /// Each word is found wherever it is: at the text's start and end, alone, and beside the
    /// bytes the search looks for first (`n`, `o`, `\`).
    @Test func eachWordIsFoundAnywhere() {
        for word in TimelineUse.words.map({ "\($0)" }) {
            for text in [word, "x" + word, word + "x", "no " + word + " on", "\\" + word, "on\n" + word + "\no"] {
                #expect(TimelineUse.mayRead(text), "\(text)")
            }
            #expect(!TimelineUse.mayRead(String(word.dropLast())), "\(word)")
            #expect(!TimelineUse.mayRead(String(word.dropFirst())), "\(word)")
        }
        #expect(!TimelineUse.mayRead("no one expl ains \\n resto re sour ce in timelin e"))
    }

    /// A word split between two 64 KiB chunks of a file is found; the file's offset is left where it was.
    @Test(arguments: [65_536 - 3, 65_536 - 7, 65_536, 2 * 65_536 - 4])
    func aWordAcrossTheChunksOfAFileIsFound(at offset: Int) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cachesh-timeline-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/s.cachesh"
        var bytes = [UInt8](repeating: UInt8(ascii: "\n"), count: 3 * 65_536)
        bytes.replaceSubrange(offset..<(offset + 8), with: Array("timeline".utf8))
        try FileIO.writeAtomically(path, String(decoding: bytes, as: UTF8.self))
        let fd = try FileIO.openRegular(path)
        defer { close(fd) }
        #expect(TimelineUse.mayRead(fd: fd))
        #expect(lseek(fd, 0, SEEK_CUR) == 0)
        let plain = directory + "/p.cachesh"
        try FileIO.writeAtomically(plain, String(repeating: "put a 1\n", count: 20_000))
        let other = try FileIO.openRegular(plain)
        defer { close(other) }
        #expect(!TimelineUse.mayRead(fd: other))
    }

    @Test func aSessionThatKeepsNoTimelineHearsOfNoChange() async {
        let shell = await TestShell()
        let heard = await shell.run { session, cache in
            session.keepTimeline(onlyIf: false, on: cache)
            return (session.keepsTimeline, cache.reportsAllChanges)
        }
        #expect(heard == (false, false))
        _ = await shell.typed("put a 1")
        #expect(await shell.run { session, _ in session.timeline.filter { _ in true }.count } == 0)
        let keeping = await TestShell()
        await keeping.run { session, cache in session.keepTimeline(onlyIf: true, on: cache) }
        _ = await keeping.typed("put a 1")
        #expect(await keeping.typed("timeline a").hasPrefix("* 2026-01-01T00:00:00.000Z stored a fresh 1"))
    }
}
