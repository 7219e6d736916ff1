import CacheCore

/// `startedDateTime`: ISO 8601 as exporters write it (`2026-01-01T10:00:00.123Z`,
/// `2026-01-01T11:00:00.123456+01:00`, `2026-01-01T10:00:00Z`, `+0100`).
enum HARTime {
    /// Milliseconds since the Unix epoch (digits past the ms dropped), or nil when `text` is not
    /// such a time or names an impossible date.
    static func milliseconds(_ text: String) -> Int64? {
        let b = Array(text.utf8)
        // YYYY-MM-DDTHH:MM:SS, checked (with the date) by the canonical form's reader.
        guard b.count >= 20, b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t") else { return nil }
        var i = 19
        var millis: [UInt8] = Array("000".utf8)
        if b[i] == UInt8(ascii: ".") || b[i] == UInt8(ascii: ",") {
            i += 1
            let start = i
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 { i += 1 }
            guard i > start else { return nil }
            for k in 0..<min(3, i - start) { millis[k] = b[start + k] }
        }
        guard i < b.count else { return nil }
        var zone: Int64 = 0
        switch b[i] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard i + 1 == b.count else { return nil }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign: Int64 = b[i] == UInt8(ascii: "+") ? 1 : -1
            let z = Array(b[(i + 1)...].filter { $0 != UInt8(ascii: ":") })
            guard z.count == 4, z.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                  b.count - i - 1 == 4 || (b.count - i - 1 == 5 && b[i + 3] == UInt8(ascii: ":")) else { return nil }
            let hours = Int64(z[0] - 0x30) * 10 + Int64(z[1] - 0x30)
            let minutes = Int64(z[2] - 0x30) * 10 + Int64(z[3] - 0x30)
            guard hours < 24, minutes < 60 else { return nil }
            zone = sign * (hours * 60 + minutes) * 60_000
        default:
            return nil
        }
        var canonical = Array(b[0..<19])
        canonical[10] = UInt8(ascii: "T")
        canonical += [UInt8(ascii: ".")] + millis + [UInt8(ascii: "Z")]
        guard let local = canonical.withUnsafeBufferPointer({ TimeText.parseISO8601(utf8: $0) }) else { return nil }
        return local - zone
    }
}
