import Foundation
import CacheCore
import Synchronization
import Testing

/// The inspector's hook (SPEC §9): `setChangeTap` hands every change with its cause to the tap,
/// watched or not, leaves what the delegate hears alone, and is gone when removed.
@Suite struct ChangeTapTests {
    /// Notes what the delegate hears of every change (`noted`).
    final class Delegate: CacheDelegate, Sendable {
        let noted = Mutex<[String]>([])
        func cache(_ cache: isolated Cache, observed event: CacheEvent) {}
        func cache(_ cache: isolated Cache, validated result: ValidationResult) {}
        func cache(_ cache: isolated Cache, runScheduled token: Int) {}
        func cache(_ cache: isolated Cache, noted event: CacheEvent) {
            noted.withLock { $0.append("\(event.cause.rawValue) \(event.key)") }
        }
    }

    @Test func theTapHearsEveryChangeWithItsCauseAndTheDelegateOnlyWhatItAskedFor() {
        let cache = Cache()
        let delegate = Delegate()
        let tapped = Mutex<[String]>([])
        let (before, during, after) = cache.withIsolation { cache -> (Bool, Bool, Bool) in
            cache.setDelegate(delegate)
            cache.put("feed:home", .int(1))
            cache.setChangeTap { event in tapped.withLock { $0.append("\(event.cause.rawValue) \(event.key) \(event.state.rawValue)") } }
            let during = cache.reportsAllChanges
            cache.invalidate(.key("feed:home"))
            cache.evict("feed:home")
            cache.setChangeTap(nil)
            cache.put("feed:other", .int(2))
            return (cache.hasChangeTap, during, cache.reportsAllChanges)
        }
        #expect(tapped.withLock { $0 } == ["invalidated feed:home stale", "evicted feed:home absent"])
        #expect(!before && !during && !after)
        // The app never asked for every change: its delegate heard none, tap or not.
        #expect(delegate.noted.withLock { $0 }.isEmpty)
    }

    @Test func aDelegateThatAskedForEveryChangeKeepsHearingThemWhenTheTapGoes() {
        let cache = Cache()
        let delegate = Delegate()
        cache.withIsolation { cache in
            cache.setDelegate(delegate)
            cache.reportsAllChanges = true
            cache.setChangeTap { _ in }
            cache.put("a:1", .int(1))
            cache.setChangeTap(nil)
            cache.put("a:2", .int(2))
        }
        #expect(delegate.noted.withLock { $0 } == ["stored a:1", "stored a:2"])
    }
}

/// A recording streamed (`startRecording(to: RecordingStream)`, for an inspector: SPEC §9) is
/// the lines a recording's file holds, in order, and ends when another recording replaces it.
@Suite struct RecordingStreamTests {
    /// The same calls on a cache on the virtual clock, recorded by `record`.
    static func session(_ record: @Sendable (isolated Cache) throws -> Void, stop: Bool = true) throws -> Cache {
        let cache = Cache()
        try cache.withIsolation { cache in
            cache.put("feed:home", .int(1))
            try record(cache)
            cache.put("feed:home", .int(2), tags: ["t"])
            cache.invalidate(.tag("t"))
            _ = cache.peek("feed:home")
            if stop { try cache.stopRecording() }
        }
        return cache
    }

    @Test func aStreamedRecordingIsTheLinesOfAFileRecording() throws {
        let lines = Mutex<[String]>([])
        let stream = RecordingStream { line in lines.withLock { $0.append(line) } }
        let cache = try Self.session({ cache in cache.startRecording(to: stream) }, stop: false)
        let streaming = try cache.withIsolation { cache -> Bool in
            let streaming = cache.isRecording(to: stream)
            try cache.stopRecording()
            return streaming
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("stream-\(UInt64.random(in: 0 ... .max)).recording").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try Self.session { cache in try cache.startRecording(to: path) }
        let file = try String(contentsOfFile: path, encoding: .utf8)
        #expect(streaming)
        #expect(lines.withLock { $0 }.map { $0 + "\n" }.joined() == file)
        #expect(lines.withLock { $0 }.first == RecordingFormat.header)
    }

    @Test func aRecordingThatReplacesAStreamEndsIt() throws {
        let lines = Mutex<[String]>([])
        let stream = RecordingStream { line in lines.withLock { $0.append(line) } }
        let cache = try Self.session({ cache in cache.startRecording(to: stream) }, stop: false)
        let (before, after) = cache.withIsolation { cache -> (Bool, Bool) in
            let before = cache.isRecording(to: stream)
            cache.startRecording()
            return (before, cache.isRecording(to: stream) || !cache.isRecording)
        }
        #expect(before && !after)
        let last = try #require(lines.withLock { $0 }.last)
        #expect(last.contains(#""record":"end""#))
        // What it holds reads back as a whole recording.
        _ = try RecordingFormat.parse(lines.withLock { $0 }.joined(separator: "\n") + "\n")
    }
}
