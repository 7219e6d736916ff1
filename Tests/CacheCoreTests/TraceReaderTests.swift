import CacheCore
import CacheReplay
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The streaming trace reader: each format, times, and errors that name the file and line.
@Suite struct TraceReaderTests {
    static func temporaryFile(_ bytes: [UInt8], suffix: String = ".txt") -> String {
        var template = Array("/tmp/cachesh-trace-XXXXXX\(suffix)".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemps($0.baseAddress!, Int32(suffix.utf8.count)) }
        precondition(fd >= 0)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            precondition(n > 0)
            offset += n
        }
        close(fd)
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func read(_ text: String, _ options: TraceOptions) throws(ReplayError) -> [TraceRequest] {
        try read(Array(text.utf8), options)
    }

    static func read(_ bytes: [UInt8], _ options: TraceOptions) throws(ReplayError) -> [TraceRequest] {
        let path = temporaryFile(bytes)
        defer { unlink(path) }
        let reader = try TraceReader(path: path, name: "t.txt", options: options)
        var all: [TraceRequest] = [], batch: [TraceRequest] = []
        while try reader.next(into: &batch, count: 3) { all += batch }
        return all
    }

    static func error(_ text: String, _ options: TraceOptions) -> String? {
        do { _ = try read(text, options); return nil } catch { return error.description }
    }

    let id = TraceReader.id(ofKey:)

    @Test func keysStepTheClockAndSkipBlankAndCommentLines() throws {
        let requests = try Self.read("# a comment\nhome\n\n  profile:42  \r\nhome", TraceOptions(format: .keys, step: 10))
        #expect(requests == [TraceRequest(time: 0, id: id("home")), TraceRequest(time: 10, id: id("profile:42")),
                             TraceRequest(time: 20, id: id("home"))])
    }

    @Test func timedTracesFollowTheirTimesInTheirUnit() throws {
        let seconds = try Self.read("100 a\n100.5 b\n101 a\n", TraceOptions(format: .timed))
        #expect(seconds.map(\.time) == [0, 500, 1_000])
        let micros = try Self.read("5000 a\n7500 b\n", TraceOptions(format: .timed, timeUnit: .us))
        #expect(micros.map(\.time) == [0, 2])
    }

    @Test func isoTimesAreReadWhateverTheUnit() throws {
        let text = "2026-01-01T08:30:00.000Z a\n2026-01-01T08:30:01.250Z b\n2026-01-02T08:30:00.000Z a\n"
        let requests = try Self.read(text, TraceOptions(format: .timed, timeUnit: .ms))
        #expect(requests.map(\.time) == [0, 1_250, 86_400_000])
    }

    @Test func csvNamesItsColumnsAndUnquotesFields() throws {
        let text = "ts,user,path\n10,u1,\"/feed\"\n12,u2,\"/a,\"\"b\"\"\"\n"
        let requests = try Self.read(text, TraceOptions(format: .csv, timeUnit: .ms, keyColumn: "path", timeColumn: "ts"))
        #expect(requests == [TraceRequest(time: 0, id: id("/feed")), TraceRequest(time: 2, id: id("/a,\"b\""))])
        let untimed = try Self.read("key\nx\ny\n", TraceOptions(format: .csv, step: 5))
        #expect(untimed.map(\.time) == [0, 5])
    }

    @Test func oracleRecordsCarryIdsAndNextAccesses() throws {
        var bytes: [UInt8] = []
        func append<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { bytes += $0 } }
        for (t, id, next) in [(UInt32(7), UInt64(42), Int64(2)), (8, 9, -1), (9, 42, -1)] {
            append(t); append(id); append(UInt32(1)); append(next)
        }
        let requests = try Self.read(bytes, TraceOptions(format: .oracle))
        #expect(requests == [TraceRequest(time: 0, id: 42, nextAccess: 2), TraceRequest(time: 1_000, id: 9),
                             TraceRequest(time: 2_000, id: 42)])
        #expect(Self.errorOf(bytes + [1, 2, 3]) == "t.txt:4: error: record cut short: 3 of 24 bytes")
    }

    /// 100,000 records (2.4 MB: records straddle the 1 MiB buffer's end) read in batches of 4,096
    /// come out as they were written, and a record whose time goes back deep in the file is refused
    /// at its record number, after the records before it were read.
    @Test func oracleRecordsAcrossBuffersAndBatches() throws {
        func file(backAt: Int?) -> [UInt8] {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(2_400_000)
            func append<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { bytes += $0 } }
            for i in 0..<100_000 {
                append(UInt32(i == backAt ? 1 : 1_000 + i / 7)); append(UInt64(i % 977)); append(UInt32(1))
                append(Int64(i % 5 == 0 ? -1 : i + 977))
            }
            return bytes
        }
        let path = Self.temporaryFile(file(backAt: nil))
        defer { unlink(path) }
        let reader = try TraceReader(path: path, name: "t.bin", options: TraceOptions(format: .oracle, timeUnit: .ms))
        var all: [TraceRequest] = [], batch: [TraceRequest] = []
        while try reader.next(into: &batch, count: 4_096) { all += batch }
        #expect(all.count == 100_000 && reader.line == 100_000 && reader.requests == 100_000)
        #expect(all.indices.allSatisfy { i in
            all[i] == TraceRequest(time: Int64(i / 7), id: UInt64(i % 977), nextAccess: i % 5 == 0 ? .max : Int64(i + 977))
        })
        #expect(reader.lastTime == Int64(99_999 / 7))
        let back = Self.temporaryFile(file(backAt: 70_001))
        defer { unlink(back) }
        let damaged = try TraceReader(path: back, name: "t.bin", options: TraceOptions(format: .oracle, timeUnit: .ms))
        var read = 0
        do {
            while try damaged.next(into: &batch, count: 4_096) { read += batch.count }
            Issue.record("the trace was read to its end")
        } catch {
            #expect(error.description == "t.bin:70002: error: time goes backwards: 1ms after \(1_000 + 70_000 / 7)ms (sort the trace by time)")
        }
        #expect(read == 69_632 && damaged.requests == 70_001)
    }

    static func errorOf(_ bytes: [UInt8]) -> String? {
        do { _ = try read(bytes, TraceOptions(format: .oracle)); return nil } catch { return error.description }
    }

    @Test func badLinesNameTheFileAndLine() {
        #expect(Self.error("a\nb c\n", TraceOptions(format: .keys)) == "t.txt:2: error: a key may not contain white space (\"b c\")")
        #expect(Self.error("1 a\nx b\n", TraceOptions(format: .timed))
                == "t.txt:2: error: bad time \"x\": expected a number of s or YYYY-MM-DDTHH:MM:SS.sssZ")
        #expect(Self.error("2026-02-30T00:00:00.000Z a\n", TraceOptions(format: .timed))
                == "t.txt:1: error: bad time \"2026-02-30T00:00:00.000Z\": expected YYYY-MM-DDTHH:MM:SS.sssZ")
        #expect(Self.error("1 a\n2\n", TraceOptions(format: .timed)) == "t.txt:2: error: expected TIME KEY")
        #expect(Self.error("5 a\n4 b\n", TraceOptions(format: .timed))
                == "t.txt:2: error: time goes backwards: 4s after 5s (sort the trace by time)")
        #expect(Self.error("a,b\n1,2\n", TraceOptions(format: .csv))
                == "t.txt:1: error: no column \"key\" in the header (it has a, b); name the key column with key=NAME or key=NUMBER, and give header=no if the first line is a row")
        #expect(Self.error("key,time\nx,1\ny\n", TraceOptions(format: .csv)) == "t.txt:3: error: 1 fields where the header has 2")
        #expect(Self.error("a\nk*\n", TraceOptions(format: .keys)) == "t.txt:2: error: * is for patterns, not keys (\"k*\")")
    }

    @Test func linesAcrossTheBufferBoundaryReadWhole() throws {
        // Over 2 MiB of keys of varying length: many lines straddle the 1 MiB buffer's end.
        var rng = SeededGenerator(seed: 5)
        var text = ""
        var expected: [UInt64] = []
        while text.utf8.count < 2_300_000 {
            let key = "key-" + String(repeating: "x", count: Int.random(in: 0..<40, using: &rng)) + String(Int.random(in: 0..<1_000, using: &rng))
            text += key + "\n"
            expected.append(id(key))
        }
        let requests = try Self.read(text, TraceOptions(format: .keys))
        #expect(requests.map(\.id) == expected)
    }

    @Test func aLineLongerThanTheLimitIsAnError() {
        let text = "a\n" + String(repeating: "x", count: TraceReader.maxLine + 10) + "\n"
        #expect(Self.error(text, TraceOptions(format: .keys)) == "t.txt:2: error: line longer than 1024 KiB")
    }

    @Test func aReplayPollsItsInterruptBetweenBatchesAndStops() throws {
        let text = String(repeating: "a\nb\nc\n", count: 10_000)
        let path = Self.temporaryFile(Array(text.utf8))
        defer { unlink(path) }
        let reader = try TraceReader(path: path, name: "t.txt", options: TraceOptions())
        var polls = 0
        #expect(throws: ReplayError("interrupted after \(2 * Replay.batchSize) requests; nothing changed")) {
            try Replay.run(reader, configurations: [ReplayConfiguration(max: 2, ttl: nil, stale: nil)]) {
                polls += 1
                return polls > 2
            }
        }
    }

    @Test func aMissingFileSaysSo() {
        #expect(throws: ReplayError.self) { try TraceReader(path: "/nonexistent/trace", name: "trace", options: TraceOptions()) }
    }
}
