import CacheCore
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The layout of a trace file.
public enum TraceFormat: String, Sendable, CaseIterable {
    /// One key per line; the clock moves a fixed step per request.
    case keys
    /// `TIME KEY` per line, separated by white space.
    case timed
    /// CSV with a header line; the key and (optional) time columns are named.
    case csv
    /// libCacheSim's oracleGeneral: 24-byte little-endian records of u32 time, u64 id, u32 size,
    /// i64 next access (the request number of the id's next request; -1: none).
    case oracle
}

/// The unit of a trace's times.
public enum TraceTimeUnit: String, Sendable, CaseIterable {
    case s, ms, us

    var microseconds: Int64 {
        switch self {
        case .s: 1_000_000
        case .ms: 1_000
        case .us: 1
        }
    }
}

/// How to read a trace.
public struct TraceOptions: Sendable, Equatable {
    public var format: TraceFormat
    public var timeUnit: TraceTimeUnit
    /// The clock's step per request when the trace has no times (ms).
    public var step: Int64
    /// CSV: the key column, by its name in the header or by its number (1 the first).
    public var keyColumn: String
    /// CSV: the time column, by name or number; nil: `time` if the header has it, else no times.
    public var timeColumn: String?
    /// CSV: whether the first line is a header (false: every line is a row, and the columns are
    /// named by number, as in libCacheSim's headerless CSV traces).
    public var header: Bool

    public init(format: TraceFormat = .keys, timeUnit: TraceTimeUnit = .s, step: Int64 = 1,
                keyColumn: String = "key", timeColumn: String? = nil, header: Bool = true) {
        self.format = format; self.timeUnit = timeUnit; self.step = step
        self.keyColumn = keyColumn; self.timeColumn = timeColumn; self.header = header
    }

    /// The 0-based index a column number (`2`) names; nil for a name.
    public static func columnNumber(_ column: String) -> Int? {
        guard !column.isEmpty, column.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(column).map { $0 - 1 } ?? Int.max
    }
}

/// Reads a trace file in batches through a fixed buffer: the file is never held whole, and
/// nothing is kept per request. Text lines may be up to `maxLine` bytes.
///
/// Blank lines, and lines starting with `#` in the `keys` and `timed` formats, are skipped.
/// A key is any text without white space, control characters or `*`; it names an id in the
/// replayed namespace and becomes a 64-bit hash of its bytes. Errors name the file and the line
/// (for `oracle`, the record number) and stop the reading.
public final class TraceReader {
    public static let maxLine = 1 << 20
    static let bufferSize = 1 << 20

    public let name: String
    public let options: TraceOptions
    private let fd: Int32
    private var buffer: UnsafeMutableRawBufferPointer
    private var start = 0
    private var end = 0
    private var atEOF = false
    /// Whether the file's first bytes were checked for a compressed file.
    private var checkedStart = false
    /// Lines (records) consumed so far.
    public private(set) var line = 0
    /// Requests read so far.
    public private(set) var requests = 0
    /// The first request's time (µs); times are relative to it.
    private var origin: Int64?
    private var previous: Int64 = 0
    /// The last request's time (virtual ms since the first).
    public private(set) var lastTime: Int64 = 0
    /// The file's size in bytes when it was opened.
    public let size: Int64
    /// The bytes read from the file so far.
    private var bytesRead: Int64 = 0
    /// The bytes of the file consumed so far (read, and not waiting in the buffer), for progress;
    /// of a compressed file, the compressed bytes decompressed so far.
    public var position: Int64 { decompression?.position ?? bytesRead - Int64(end - start) }
    /// The decompression of a gzip- or zstd-compressed file; nil for a plain one.
    private var decompression: (any DecompressionStream)?
    /// The file's name ends in `.gz` (`.zst`): an oracle trace starting with gzip's (zstd's) magic
    /// number is taken as compressed (without the name, a record's time may start with those bytes).
    private let gzipName: Bool
    private let zstdName: Bool
    // CSV.
    /// Whether the columns are still to be found (from the header, or the first row).
    private var header = false
    private var keyField = -1
    private var timeField = -1
    private var fieldCount = 0
    private var fields: [(start: Int, end: Int, quoted: Bool)] = []
    private var unquoted: [UInt8] = []

    /// Opens `path` (shown as `name` in errors).
    public init(path: String, name: String, options: TraceOptions) throws(ReplayError) {
        self.name = name
        self.options = options
        gzipName = path.hasSuffix(".gz")
        zstdName = path.hasSuffix(".zst")
        // Look before opening: opening a FIFO blocks until a writer comes, and a device
        // (/dev/zero, /dev/urandom as an oracle trace) reads without end.
        var before = stat()
        guard stat(path, &before) == 0 else { throw ReplayError(file: name, "cannot read: \(String(cString: strerror(errno)))") }
        if let problem = FileKind.notRegular(before) { throw ReplayError(file: name, "cannot read: \(problem)") }
        // O_NONBLOCK in case a FIFO took the file's place since: its open returns at once.
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw ReplayError(file: name, "cannot read: \(String(cString: strerror(errno)))") }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let problem = String(cString: strerror(errno))
            close(fd)
            throw ReplayError(file: name, "cannot read: \(problem)")
        }
        if let problem = FileKind.notRegular(st) {
            close(fd)
            throw ReplayError(file: name, "cannot read: \(problem)")
        }
        self.fd = fd
        size = Int64(st.st_size)
        buffer = .allocate(byteCount: Self.bufferSize, alignment: 8)
        header = options.format == .csv
    }

    deinit {
        close(fd)
        buffer.deallocate()
    }

    private func fail(_ message: String) -> ReplayError {
        ReplayError(file: name, line: line, message)
    }

    /// Moves the unread bytes to the front and reads more; false at the end of the file.
    private func refill() throws(ReplayError) -> Bool {
        if atEOF { return false }
        if start > 0 {
            let n = end - start
            if n > 0 { buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + start, byteCount: n) }
            start = 0
            end = n
        }
        guard end < buffer.count else { return true }
        let room = UnsafeMutableRawBufferPointer(rebasing: buffer[end...])
        let n: Int
        if let decompression {
            do { n = try decompression.read(into: room, from: readFile) } catch {
                // The file's problem, not a line's: zlib and libzstd find damage up to a buffer
                // after it (a checksum, at the end of a member or a frame).
                throw error.file == nil ? ReplayError(file: name, "cannot read: " + error.message) : error
            }
        } else {
            n = try readFile(room)
            bytesRead += Int64(n)
        }
        if n == 0 { atEOF = true; return false }
        end += n
        return true
    }

    /// Reads the file's next bytes into `room`: how many, 0 at its end.
    private func readFile(_ room: UnsafeMutableRawBufferPointer) throws(ReplayError) -> Int {
        do {
            return try FileDescriptor(rawValue: fd).read(into: room)
        } catch {
            throw ReplayError(file: name, "cannot read: \(String(cString: strerror((error as? Errno)?.rawValue ?? errno)))")
        }
    }

    /// Replaces `batch` with up to `count` next requests; false (and an empty batch) at the end.
    public func next(into batch: inout [TraceRequest], count: Int) throws(ReplayError) -> Bool {
        batch.removeAll(keepingCapacity: true)
        if !checkedStart { try checkStart() }
        if options.format == .oracle { return try nextRecords(into: &batch, count: count) }
        while batch.count < count {
            guard let request = try options.format == .oracle ? nextRecord() : nextLine() else { break }
            batch.append(request)
        }
        return !batch.isEmpty
    }

    /// Reads a gzip-compressed file through zlib and a zstd-compressed one (libCacheSim's traces
    /// often come as `.zst`) through libzstd; refuses UTF-16 text: its bytes read as keys gave an
    /// error about control characters.
    private func checkStart() throws(ReplayError) {
        checkedStart = true
        while end - start < 4 && !atEOF { _ = try refill() }
        var p = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self) + start
        var n = end - start
        // Not for an oracle trace without .zst (.gz) in its name: a record's time may start with
        // the magic number.
        let zstd = n >= 4 && p[0] == 0x28 && p[1] == 0xB5 && p[2] == 0x2F && p[3] == 0xFD
            && (options.format != .oracle || zstdName)
        let gzip = n >= 2 && p[0] == 0x1F && p[1] == 0x8B && (options.format != .oracle || gzipName)
        if zstd || gzip {
            // The bytes read so far are the stream's first; from now on the buffer fills with
            // what they decompress to, and the checks below look at that.
            let first = UnsafeRawBufferPointer(start: p, count: n)
            decompression = zstd ? ZstdStream(first: first, ended: atEOF) : GzipStream(first: first, ended: atEOF)
            start = 0
            end = 0
            atEOF = false
            while end - start < 4 && !atEOF { _ = try refill() }
            p = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self) + start
            n = end - start
        }
        // UTF-16 text (what some spreadsheets export) read as bytes is keys full of NULs.
        if options.format != .oracle && n >= 2 && ((p[0] == 0xFF && p[1] == 0xFE) || (p[0] == 0xFE && p[1] == 0xFF)) {
            line = 1
            throw fail("the trace is UTF-16 text: convert it to UTF-8 first (iconv -f UTF-16 -t UTF-8)")
        }
        // Text never holds a NUL byte; a binary trace (oracleGeneral, vscsi) read as text failed
        // on control characters in a key, or on a header of binary noise.
        if options.format != .oracle, let nul = memchr(p, 0, Swift.min(n, 4096)) {
            let offset = p.distance(to: nul.assumingMemoryBound(to: UInt8.self))
            line = 1 + UnsafeBufferPointer(start: p, count: offset).reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
            throw fail("a NUL byte: this is a binary file, not format=\(options.format.rawValue) text (an oracleGeneral trace takes format=oracle)")
        }
    }

    // MARK: Binary records

    /// Appends up to `count` records to the empty `batch`: the whole records in the buffer are
    /// decoded in one loop over local copies of the reader's state (a record at a time through
    /// `nextRecord` paid the class's property accesses and the array's checks on each), and the
    /// buffer is refilled between runs. The same requests, errors and line numbers as `nextRecord`.
    private func nextRecords(into batch: inout [TraceRequest], count: Int) throws(ReplayError) -> Bool {
        while batch.count < count {
            if end - start < 24 {
                // A record across the buffer's end, or the file's: one at a time.
                guard let request = try nextRecord() else { break }
                batch.append(request)
                continue
            }
            let n = Swift.min((end - start) / 24, count - batch.count)
            let unit = options.timeUnit.microseconds
            let base = UnsafeRawPointer(buffer.baseAddress! + start)
            let first = batch.count
            var origin = self.origin, previous = self.previous, last = lastTime
            var backwards = -1
            batch.append(contentsOf: repeatElement(TraceRequest(time: 0, id: 0), count: n))
            batch.withUnsafeMutableBufferPointer { out in
                for k in 0..<n {
                    let p = base + k * 24
                    let micros = Int64(UInt32(littleEndian: p.loadUnaligned(as: UInt32.self))) * unit
                    let id = UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 4, as: UInt64.self))
                    let next = Int64(littleEndian: p.loadUnaligned(fromByteOffset: 16, as: Int64.self))
                    if let o = origin {
                        if micros < previous { backwards = k; break }
                        last = (micros - o) / 1000
                    } else {
                        origin = micros
                        last = 0
                    }
                    previous = micros
                    out[first + k] = TraceRequest(time: last, id: id, nextAccess: next < 0 ? .max : next)
                }
            }
            let taken = backwards < 0 ? n : backwards
            self.origin = origin; self.previous = previous; lastTime = last
            start += taken * 24
            line += taken
            requests += taken
            if backwards >= 0 {
                batch.removeLast(n - taken)
                // The record that goes back in time, through the one-record path for its error.
                _ = try nextRecord()
            }
        }
        return !batch.isEmpty
    }

    private func nextRecord() throws(ReplayError) -> TraceRequest? {
        if end - start < 24 {
            _ = try refill()
            if end - start == 0 { return nil }
            while end - start < 24 && !atEOF { _ = try refill() }
            if end - start < 24 {
                line += 1
                throw fail("record cut short: \(end - start) of 24 bytes")
            }
        }
        line += 1
        let p = UnsafeRawPointer(buffer.baseAddress! + start)
        let time = UInt32(littleEndian: p.loadUnaligned(as: UInt32.self))
        let id = UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 4, as: UInt64.self))
        let next = Int64(littleEndian: p.loadUnaligned(fromByteOffset: 16, as: Int64.self))
        start += 24
        let ms = try clock(Int64(time) * options.timeUnit.microseconds)
        requests += 1
        return TraceRequest(time: ms, id: id, nextAccess: next < 0 ? .max : next)
    }

    // MARK: Text lines

    /// The next line's request, skipping lines without one; nil at the end of the file.
    private func nextLine() throws(ReplayError) -> TraceRequest? {
        while true {
            // Find the end of the next line, reading more as needed.
            var scanFrom = start
            var lineEnd: Int
            while true {
                let base = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
                if let nl = memchr(base + scanFrom, 0x0A, end - scanFrom) {
                    lineEnd = base.distance(to: nl.assumingMemoryBound(to: UInt8.self))
                    break
                }
                if end - start >= Self.maxLine {
                    line += 1
                    throw fail("line longer than \(Self.maxLine / 1024) KiB")
                }
                let consumed = start
                scanFrom = end - consumed
                if try !refill() {
                    if end == start { return nil }
                    lineEnd = end
                    break
                }
            }
            line += 1
            let base = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
            var a = start
            // A UTF-8 byte order mark (what some editors put first) is not part of the first
            // key or column name.
            if line == 1 && lineEnd - a >= 3 && base[a] == 0xEF && base[a + 1] == 0xBB && base[a + 2] == 0xBF { a += 3 }
            var b = lineEnd
            start = lineEnd < end ? lineEnd + 1 : end
            if b > a && base[b - 1] == 0x0D { b -= 1 }
            if let request = try parse(base, a, b) { return request }
        }
    }

    @inline(__always)
    private static func isBlank(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 }

    private func parse(_ p: UnsafeMutablePointer<UInt8>, _ from: Int, _ to: Int) throws(ReplayError) -> TraceRequest? {
        var a = from, b = to
        while a < b && Self.isBlank(p[a]) { a += 1 }
        while b > a && Self.isBlank(p[b - 1]) { b -= 1 }
        if a == b { return nil }
        switch options.format {
        case .keys:
            if p[a] == UInt8(ascii: "#") { return nil }
            let id = try key(p, a, b)
            let time = try steppedTime()
            requests += 1
            return TraceRequest(time: time, id: id)
        case .timed:
            if p[a] == UInt8(ascii: "#") { return nil }
            var m = a
            while m < b && !Self.isBlank(p[m]) { m += 1 }
            var k = m
            while k < b && Self.isBlank(p[k]) { k += 1 }
            if k == b { throw fail("expected TIME KEY") }
            let time = try clock(try timeValue(p, a, m))
            let id = try key(p, k, b)
            requests += 1
            return TraceRequest(time: time, id: id)
        case .csv:
            return try csvRow(p, from, to)
        case .oracle:
            return nil
        }
    }

    /// The id of the key in bytes `a..<b`, after checking it.
    private func key(_ p: UnsafeMutablePointer<UInt8>, _ a: Int, _ b: Int) throws(ReplayError) -> UInt64 {
        if a == b { throw fail("empty key") }
        for i in a..<b {
            let c = p[i]
            if c == 0x20 || c == 0x09 { throw fail("a key may not contain white space (\(quoted(p, a, b)))") }
            if c < 0x20 || c == 0x7F { throw fail("a key may not contain control characters") }
            if c == UInt8(ascii: "*") { throw fail("* is for patterns, not keys (\(quoted(p, a, b)))") }
        }
        return Self.hash(UnsafeRawPointer(p + a), b - a)
    }

    private func quoted(_ p: UnsafeMutablePointer<UInt8>, _ a: Int, _ b: Int) -> String {
        let text = String(decoding: UnsafeBufferPointer(start: p + a, count: Swift.min(b - a, 60)), as: UTF8.self)
        return "\"" + text + (b - a > 60 ? "…" : "") + "\""
    }

    /// A time in the trace's unit, as µs: digits with an optional fraction, or an ISO 8601 UTC
    /// time as cachesh prints them (`2026-01-01T08:30:00.250Z`), whatever the unit.
    private func timeValue(_ p: UnsafeMutablePointer<UInt8>, _ a: Int, _ b: Int) throws(ReplayError) -> Int64 {
        if b - a == 24 && p[a + 10] == UInt8(ascii: "T") {
            let text = String(decoding: UnsafeBufferPointer(start: p + a, count: 24), as: UTF8.self)
            guard let ms = TimeText.parseISO8601(Substring(text)) else {
                throw fail("bad time \(quoted(p, a, b)): expected YYYY-MM-DDTHH:MM:SS.sssZ")
            }
            return ms * 1_000
        }
        let unit = options.timeUnit.microseconds
        var whole: Int64 = 0
        var i = a
        var digits = 0
        // The range is the value's, not a count of digits: a Unix time in microseconds has 16
        // (1732500000000000), and 15 digits used to be the most.
        while i < b, p[i] >= 0x30, p[i] <= 0x39 {
            let (tens, o1) = whole.multipliedReportingOverflow(by: 10)
            let (sum, o2) = tens.addingReportingOverflow(Int64(p[i] - 0x30))
            if o1 || o2 { throw fail("time \(quoted(p, a, b)) is out of range") }
            whole = sum
            digits += 1
            i += 1
        }
        var fraction: Int64 = 0
        var scale = unit
        if i < b && p[i] == UInt8(ascii: ".") {
            i += 1
            var fractionDigits = 0
            while i < b, p[i] >= 0x30, p[i] <= 0x39 {
                if scale >= 10 { scale /= 10; fraction += Int64(p[i] - 0x30) * scale }
                fractionDigits += 1
                i += 1
            }
            if fractionDigits == 0 { digits = 0 }
        }
        if digits == 0 || i != b {
            throw fail("bad time \(quoted(p, a, b)): expected a number of \(options.timeUnit.rawValue) or YYYY-MM-DDTHH:MM:SS.sssZ")
        }
        let (micros, overflow) = whole.multipliedReportingOverflow(by: unit)
        if overflow || micros > Int64.max / 4 - fraction { throw fail("time \(quoted(p, a, b)) is out of range") }
        return micros + fraction
    }

    /// The virtual time (ms) of the next request of a trace without times: `step=` per request,
    /// within the range a timed trace's times have (a product that wrapped round used to give
    /// times that went backwards, and a negative duration).
    private func steppedTime() throws(ReplayError) -> Int64 {
        let (time, overflow) = Int64(requests).multipliedReportingOverflow(by: options.step)
        if overflow || time > Int64.max / 4 / 1000 {
            throw fail("the time of request \(requests + 1) (step=\(options.step)ms each) is out of range")
        }
        lastTime = time
        return time
    }

    /// The virtual time (ms since the first request) of a request at `micros`.
    private func clock(_ micros: Int64) throws(ReplayError) -> Int64 {
        guard let origin else {
            origin = micros
            previous = micros
            lastTime = 0
            return 0
        }
        if micros < previous {
            throw fail("time goes backwards: \(Self.describe(micros, options.timeUnit)) after \(Self.describe(previous, options.timeUnit)) (sort the trace by time)")
        }
        previous = micros
        lastTime = (micros - origin) / 1000
        return lastTime
    }

    private static func describe(_ micros: Int64, _ unit: TraceTimeUnit) -> String {
        let u = unit.microseconds
        let whole = micros / u, rest = micros % u
        if rest == 0 { return "\(whole)\(unit.rawValue)" }
        var fraction = String(rest)
        fraction = String(repeating: "0", count: String(u).count - 1 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(whole).\(fraction)\(unit.rawValue)"
    }

    // MARK: CSV

    /// Splits a CSV line into fields (RFC 4180 quoting, on one line).
    private func splitCSV(_ p: UnsafeMutablePointer<UInt8>, _ from: Int, _ to: Int) throws(ReplayError) {
        fields.removeAll(keepingCapacity: true)
        var i = from
        while true {
            if i < to && p[i] == UInt8(ascii: "\"") {
                let fieldStart = i + 1
                var j = fieldStart
                while true {
                    guard j < to else { throw fail("a quoted field is not closed") }
                    if p[j] == UInt8(ascii: "\"") {
                        if j + 1 < to && p[j + 1] == UInt8(ascii: "\"") { j += 2; continue }
                        break
                    }
                    j += 1
                }
                fields.append((fieldStart, j, true))
                i = j + 1
                if i < to && p[i] != UInt8(ascii: ",") { throw fail("expected , after a quoted field") }
            } else {
                var j = i
                while j < to && p[j] != UInt8(ascii: ",") { j += 1 }
                fields.append((i, j, false))
                i = j
            }
            if i >= to { break }
            i += 1  // the comma
            if i == to { fields.append((to, to, false)); break }
        }
    }

    private func fieldText(_ p: UnsafeMutablePointer<UInt8>, _ f: (start: Int, end: Int, quoted: Bool)) -> String {
        var bytes: [UInt8] = []
        var i = f.start
        while i < f.end {
            bytes.append(p[i])
            i += f.quoted && p[i] == UInt8(ascii: "\"") ? 2 : 1
        }
        return String(decoding: bytes, as: UTF8.self).trimmingBlanks()
    }

    /// The index of the column `column` names: a number (1 the first), or a name in the header.
    private func column(_ column: String, of names: [String], for role: String) throws(ReplayError) -> Int {
        if let index = TraceOptions.columnNumber(column) {
            guard index >= 0 && index < fieldCount else {
                throw fail("\(role)=\(column): no column \(column); the \(options.header ? "header" : "first row") has \(fieldCount) columns")
            }
            return index
        }
        guard options.header else {
            throw fail("\(role)=\(column): without a header, name the \(role) column by its number (\(role)=2)")
        }
        guard let index = names.firstIndex(of: column) else {
            throw fail("no column \"\(column)\" in the header (it has \(names.joined(separator: ", "))); name the \(role) column with \(role)=NAME or \(role)=NUMBER, and give header=no if the first line is a row")
        }
        return index
    }

    private func csvRow(_ p: UnsafeMutablePointer<UInt8>, _ from: Int, _ to: Int) throws(ReplayError) -> TraceRequest? {
        try splitCSV(p, from, to)
        if header {
            header = false
            let names = options.header ? fields.map { fieldText(p, $0) } : []
            fieldCount = fields.count
            keyField = try column(options.keyColumn, of: names, for: "key")
            if let column = options.timeColumn {
                timeField = try self.column(column, of: names, for: "time")
            } else {
                timeField = names.firstIndex(of: "time") ?? -1
            }
            if options.header { return nil }
        }
        if fields.count != fieldCount {
            throw fail("\(fields.count) fields where the \(options.header ? "header" : "first row") has \(fieldCount)")
        }
        var kf = fields[keyField]
        // Trim blanks around unquoted fields.
        func trimmed(_ f: (start: Int, end: Int, quoted: Bool)) -> (start: Int, end: Int, quoted: Bool) {
            var a = f.start, b = f.end
            while a < b && Self.isBlank(p[a]) { a += 1 }
            while b > a && Self.isBlank(p[b - 1]) { b -= 1 }
            return (a, b, f.quoted)
        }
        kf = trimmed(kf)
        let id: UInt64
        if kf.quoted, UnsafeBufferPointer(start: p + kf.start, count: kf.end - kf.start).contains(UInt8(ascii: "\"")) {
            unquoted.removeAll(keepingCapacity: true)
            var i = kf.start
            while i < kf.end {
                unquoted.append(p[i])
                i += p[i] == UInt8(ascii: "\"") ? 2 : 1
            }
            let n = unquoted.count
            id = try unquoted.withUnsafeMutableBufferPointer { buffer throws(ReplayError) in
                try key(buffer.baseAddress!, 0, n)
            }
        } else {
            id = try key(p, kf.start, kf.end)
        }
        let time: Int64
        if timeField >= 0 {
            let tf = trimmed(fields[timeField])
            time = try clock(try timeValue(p, tf.start, tf.end))
        } else {
            time = try steppedTime()
        }
        requests += 1
        return TraceRequest(time: time, id: id)
    }

    // MARK: Key ids

    /// A 64-bit hash of a key's bytes: eight at a time through a multiply-xorshift mix.
    /// Two keys of a trace share an id with a chance of about n²/2⁶⁵ (10⁻⁷ for a million keys).
    @inline(__always)
    public static func hash(_ p: UnsafeRawPointer, _ n: Int) -> UInt64 {
        var h: UInt64 = 0x243F_6A88_85A3_08D3 ^ (UInt64(n) &* 0x9E37_79B9_7F4A_7C15)
        var i = 0
        while i + 8 <= n {
            h = mix(h ^ p.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            i += 8
        }
        if i < n {
            var tail: UInt64 = 0
            var shift: UInt64 = 0
            while i < n {
                tail |= UInt64(p.load(fromByteOffset: i, as: UInt8.self)) << shift
                shift += 8
                i += 1
            }
            h = mix(h ^ tail ^ 0x5555)
        }
        return mix(h)
    }

    /// The id of a key given as text (what a trace line holding it gives).
    public static func id(ofKey key: String) -> UInt64 {
        var key = key
        return key.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return hash(UnsafeRawPointer(bitPattern: 8)!, 0) }
            return hash(UnsafeRawPointer(base), bytes.count)
        }
    }

    @inline(__always)
    private static func mix(_ x: UInt64) -> UInt64 {
        var z = x &* 0xBF58_476D_1CE4_E5B9
        z ^= z >> 31
        z = z &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 29)
    }
}

extension String {
    func trimmingBlanks() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return String(s)
    }
}
