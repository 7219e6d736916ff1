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
        let latency = "\(latencyMicros / 1000).\(String(latencyMicros % 1000 + 1000).dropFirst())ms"
        return "\(TimeText.iso8601(ms: timeMs)) \(visible(method)) \(visible(key)) \(status) \(JSONValue.string(decision).compactText) upstream=\(upstream) \(latency)\n"
    }

    /// `text` with every byte outside printable ASCII escaped, so one request is one line.
    static func visible(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 < 0x21 || $0 > 0x7e }) else { return text }
        var out = ""
        for byte in text.utf8 {
            if byte < 0x21 || byte > 0x7e {
                let hex = Array("0123456789ABCDEF")
                out.append("%"); out.append(hex[Int(byte >> 4)]); out.append(hex[Int(byte & 15)])
            } else {
                out.append(Character(Unicode.Scalar(byte)))
            }
        }
        return out
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
