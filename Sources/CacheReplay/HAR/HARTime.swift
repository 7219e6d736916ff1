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

/// Base64 (RFC 4648 §4) decoded only to its size and digest: the bytes are never held.
enum Base64Digest {
    enum Problem: Error, Equatable {
        case invalid(at: Int)
        case tooLarge
    }

    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() { table[Int(c)] = UInt8(i) }
        return table
    }()

    /// The decoded size and `sha256:` digest of `text`; line breaks are allowed between
    /// characters, `=` padding only at the end.
    static func decode(_ text: String, limit: Int) -> Result<(size: Int, digest: String), Problem> {
        var hash = SHA256()
        var group: UInt32 = 0
        var count = 0
        var size = 0
        var padding = 0
        var chunk: [UInt8] = []
        chunk.reserveCapacity(3 * 1024)
        for (i, c) in text.utf8.enumerated() {
            if c == 0x0A || c == 0x0D { continue }
            if c == UInt8(ascii: "=") {
                padding += 1
                guard padding <= 2 else { return .failure(.invalid(at: i)) }
                group <<= 6
                count += 1
            } else {
                let v = values[Int(c)]
                guard v != 0xFF, padding == 0 else { return .failure(.invalid(at: i)) }
                group = group << 6 | UInt32(v)
                count += 1
            }
            if count == 4 {
                let bytes = [UInt8(group >> 16 & 0xFF), UInt8(group >> 8 & 0xFF), UInt8(group & 0xFF)]
                let n = 3 - padding
                guard padding == 0 || n > 0 else { return .failure(.invalid(at: i)) }
                chunk += bytes[0..<n]
                size += n
                if size > limit { return .failure(.tooLarge) }
                if chunk.count >= 3 * 1024 {
                    hash.update(chunk)
                    chunk.removeAll(keepingCapacity: true)
                }
                group = 0
                count = 0
            } else if padding > 0 && count < 3 {
                return .failure(.invalid(at: i))
            }
        }
        guard count == 0 else { return .failure(.invalid(at: text.utf8.count)) }
        hash.update(chunk)
        return .success((size, hash.hexDigest()))
    }
}

/// SHA-256 (FIPS 180-4), fed in pieces, for the digests of bodies.
struct SHA256 {
    private var state: [UInt32] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]
    private var pending: [UInt8] = []
    private var length: UInt64 = 0

    private static let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    static func hexDigest(of bytes: [UInt8]) -> String {
        var hash = SHA256()
        hash.update(bytes)
        return hash.hexDigest()
    }

    mutating func update(_ bytes: [UInt8]) {
        length &+= UInt64(bytes.count)
        var i = 0
        if !pending.isEmpty {
            let take = min(64 - pending.count, bytes.count)
            pending += bytes[0..<take]
            i = take
            if pending.count == 64 {
                let block = pending
                pending.removeAll(keepingCapacity: true)
                compress(block, 0)
            }
        }
        while bytes.count - i >= 64 {
            compress(bytes, i)
            i += 64
        }
        if i < bytes.count { pending += bytes[i...] }
    }

    /// `sha256:` and the 64 hex digits; the hash is spent.
    mutating func hexDigest() -> String {
        let bits = length &* 8
        var tail = pending + [0x80]
        while tail.count % 64 != 56 { tail.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        pending = []
        var i = 0
        while i < tail.count {
            compress(tail, i)
            i += 64
        }
        let digits = Array("0123456789abcdef".utf8)
        var out = Array("sha256:".utf8)
        for word in state {
            for shift in stride(from: 28, through: 0, by: -4) { out.append(digits[Int(word >> UInt32(shift) & 0xF)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private mutating func compress(_ bytes: [UInt8], _ at: Int) {
        var w = [UInt32](repeating: 0, count: 64)
        for t in 0..<16 {
            let j = at + 4 * t
            w[t] = UInt32(bytes[j]) << 24 | UInt32(bytes[j + 1]) << 16 | UInt32(bytes[j + 2]) << 8 | UInt32(bytes[j + 3])
        }
        func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { x >> n | x << (32 - n) }
        for t in 16..<64 {
            let s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3)
            let s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10)
            w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
        }
        var (a, b, c, d, e, f, g, h) = (state[0], state[1], state[2], state[3], state[4], state[5], state[6], state[7])
        for t in 0..<64 {
            let s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
            let ch = (e & f) ^ (~e & g)
            let t1 = h &+ s1 &+ ch &+ Self.k[t] &+ w[t]
            let s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
            let maj = (a & b) ^ (a & c) ^ (b & c)
            let t2 = s0 &+ maj
            (h, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
        }
        state[0] &+= a; state[1] &+= b; state[2] &+= c; state[3] &+= d
        state[4] &+= e; state[5] &+= f; state[6] &+= g; state[7] &+= h
    }
}
