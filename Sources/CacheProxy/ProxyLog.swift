import CacheCore
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One line per request (docs/SPEC.md §8, Proxy): time, method, key, status sent, decision
/// (`Cache-Status`), upstream status, latency; to `--log FILE` (appended) or standard error.
final class ProxyLog: Sendable {
    /// The descriptor lines go to; written whole under the lock so two lines never interleave.
    private let fd: Mutex<Int32>

    init(path: String?) throws(ProxyUsageError) {
        guard let path else {
            fd = Mutex(2)
            return
        }
        let opened = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard opened >= 0 else { throw ProxyUsageError("proxy: cannot open --log \(path): \(String(cString: strerror(errno)))") }
        fd = Mutex(opened)
    }

    /// The line of one request. `key` is its target as received (control characters escaped).
    static func line(timeMs: Int64, method: String, key: String, status: Int, decision: String, upstream: String,
                     latencyMicros: Int64) -> String {
        var bytes: [UInt8] = []
        appendLine(to: &bytes, timeMs: timeMs, method: method, key: key, status: status, decision: decision, upstream: upstream,
                   latencyMicros: latencyMicros)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `line`'s text to `bytes`: for a hit, no other memory is taken than `bytes`' own.
    static func appendLine(to bytes: inout [UInt8], timeMs: Int64, method: String, key: String, status: Int, decision: String,
                           upstream: String, latencyMicros: Int64) {
        TimeText.appendISO8601(ms: timeMs, to: &bytes)
        bytes.append(UInt8(ascii: " "))
        appendVisible(method, to: &bytes)
        bytes.append(UInt8(ascii: " "))
        appendVisible(key, to: &bytes)
        bytes.append(UInt8(ascii: " "))
        appendDecimal(Int64(status), to: &bytes)
        bytes.append(UInt8(ascii: " "))
        // The decision as a JSON string: as it is, quoted, when it needs no escape.
        if decision.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7f && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
            bytes.append(UInt8(ascii: "\""))
            bytes.append(contentsOf: decision.utf8)
            bytes.append(UInt8(ascii: "\""))
        } else {
            bytes.append(contentsOf: JSONValue.string(decision).compactText.utf8)
        }
        bytes.append(contentsOf: " upstream=".utf8)
        bytes.append(contentsOf: upstream.utf8)
        bytes.append(UInt8(ascii: " "))
        // Milliseconds with three decimals: 1.234ms.
        let micros = max(0, latencyMicros)
        appendDecimal(micros / 1000, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        let fraction = micros % 1000
        bytes.append(UInt8(ascii: "0") + UInt8(fraction / 100))
        bytes.append(UInt8(ascii: "0") + UInt8(fraction / 10 % 10))
        bytes.append(UInt8(ascii: "0") + UInt8(fraction % 10))
        bytes.append(contentsOf: "ms\n".utf8)
    }

    /// `value` (not negative) in decimal.
    static func appendDecimal(_ value: Int64, to bytes: inout [UInt8]) {
        guard value >= 10 else {
            bytes.append(UInt8(ascii: "0") + UInt8(max(0, value)))
            return
        }
        appendDecimal(value / 10, to: &bytes)
        bytes.append(UInt8(ascii: "0") + UInt8(value % 10))
    }

    /// `text` with every byte outside printable ASCII escaped, so one request is one line.
    static func visible(_ text: String) -> String {
        var bytes: [UInt8] = []
        appendVisible(text, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `visible(text)` to `bytes`.
    static func appendVisible(_ text: String, to bytes: inout [UInt8]) {
        let hex: StaticString = "0123456789ABCDEF"
        for byte in text.utf8 {
            if byte < 0x21 || byte > 0x7e {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hex.utf8Start[Int(byte >> 4)])
                bytes.append(hex.utf8Start[Int(byte & 15)])
            } else {
                bytes.append(byte)
            }
        }
    }

    func write(_ bytes: [UInt8]) {
        fd.withLock { fd in
            bytes.withUnsafeBufferPointer { bytes in
                var offset = 0
                while offset < bytes.count {
                    let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                    if n < 0 { if errno == EINTR { continue }; return }
                    offset += n
                }
            }
        }
    }

    func write(_ line: String) {
        fd.withLock { fd in
            var line = line
            line.withUTF8 { bytes in
                var offset = 0
                while offset < bytes.count {
                    let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                    if n < 0 { if errno == EINTR { continue }; return }
                    offset += n
                }
            }
        }
    }
}
