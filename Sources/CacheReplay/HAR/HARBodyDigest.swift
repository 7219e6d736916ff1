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
    /// characters, `=` padding only at the end. Without `digest` the text is checked and sized
    /// only, and the digest is "" (a replay counts sizes; a transcript names bodies by digest).
    static func decode(_ text: String, limit: Int, digest: Bool = true) -> Result<(size: Int, digest: String), Problem> {
        var text = text
        return text.withUTF8 { decode(utf8: $0, limit: limit, digest: digest) }
    }

    private static func decode(utf8 input: UnsafeBufferPointer<UInt8>, limit: Int, digest: Bool) -> Result<(size: Int, digest: String), Problem> {
        var hash = SHA256()
        var group: UInt32 = 0
        var count = 0
        var size = 0
        var padding = 0
        // Decoded bytes go to the hash 3 KiB at a time.
        var chunk = [UInt8](repeating: 0, count: 3 * 1024)
        var filled = 0
        return values.withUnsafeBufferPointer { values in
            for i in 0..<input.count {
                let c = input[i]
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
                    let n = 3 - padding
                    guard n > 0 else { return .failure(.invalid(at: i)) }
                    size += n
                    if size > limit { return .failure(.tooLarge) }
                    if digest {
                        chunk[filled] = UInt8(truncatingIfNeeded: group >> 16)
                        if n > 1 { chunk[filled + 1] = UInt8(truncatingIfNeeded: group >> 8) }
                        if n > 2 { chunk[filled + 2] = UInt8(truncatingIfNeeded: group) }
                        filled += n
                        if filled == chunk.count {
                            chunk.withUnsafeBufferPointer { hash.update($0) }
                            filled = 0
                        }
                    }
                    group = 0
                    count = 0
                } else if padding > 0 && count < 3 {
                    return .failure(.invalid(at: i))
                }
            }
            guard count == 0 else { return .failure(.invalid(at: input.count)) }
            guard digest else { return .success((size, "")) }
            chunk.withUnsafeBufferPointer { hash.update(UnsafeBufferPointer(rebasing: $0[0..<filled])) }
            return .success((size, hash.hexDigest()))
        }
    }
}

/// SHA-256 (FIPS 180-4), fed in pieces, for the digests of bodies.
struct SHA256 {
    private var h0: UInt32 = 0x6a09e667, h1: UInt32 = 0xbb67ae85, h2: UInt32 = 0x3c6ef372, h3: UInt32 = 0xa54ff53a
    private var h4: UInt32 = 0x510e527f, h5: UInt32 = 0x9b05688c, h6: UInt32 = 0x1f83d9ab, h7: UInt32 = 0x5be0cd19
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
        bytes.withUnsafeBufferPointer { hash.update($0) }
        return hash.hexDigest()
    }

    mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { update($0) }
    }

    mutating func update(_ bytes: UnsafeBufferPointer<UInt8>) {
        length &+= UInt64(bytes.count)
        var i = 0
        if !pending.isEmpty {
            let take = min(64 - pending.count, bytes.count)
            pending += bytes[0..<take]
            i = take
            if pending.count == 64 {
                let block = pending
                pending.removeAll(keepingCapacity: true)
                block.withUnsafeBufferPointer { compress($0.baseAddress!) }
            }
        }
        while bytes.count - i >= 64 {
            compress(bytes.baseAddress! + i)
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
        tail.withUnsafeBufferPointer { tail in
            for i in stride(from: 0, to: tail.count, by: 64) { compress(tail.baseAddress! + i) }
        }
        let digits = Array("0123456789abcdef".utf8)
        var out = Array("sha256:".utf8)
        for word in [h0, h1, h2, h3, h4, h5, h6, h7] {
            for shift in stride(from: 28, through: 0, by: -4) { out.append(digits[Int(word >> UInt32(shift) & 0xF)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    @inline(__always) private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { x >> n | x << (32 - n) }

    /// One 64-byte block at `p`.
    private mutating func compress(_ p: UnsafePointer<UInt8>) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            Self.k.withUnsafeBufferPointer { k in
                for t in 0..<16 {
                    let j = 4 * t
                    w[t] = UInt32(p[j]) << 24 | UInt32(p[j + 1]) << 16 | UInt32(p[j + 2]) << 8 | UInt32(p[j + 3])
                }
                for t in 16..<64 {
                    let s0 = Self.rotr(w[t - 15], 7) ^ Self.rotr(w[t - 15], 18) ^ (w[t - 15] >> 3)
                    let s1 = Self.rotr(w[t - 2], 17) ^ Self.rotr(w[t - 2], 19) ^ (w[t - 2] >> 10)
                    w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
                }
                var (a, b, c, d, e, f, g, h) = (h0, h1, h2, h3, h4, h5, h6, h7)
                for t in 0..<64 {
                    let s1 = Self.rotr(e, 6) ^ Self.rotr(e, 11) ^ Self.rotr(e, 25)
                    let ch = (e & f) ^ (~e & g)
                    let t1 = h &+ s1 &+ ch &+ k[t] &+ w[t]
                    let s0 = Self.rotr(a, 2) ^ Self.rotr(a, 13) ^ Self.rotr(a, 22)
                    let maj = (a & b) ^ (a & c) ^ (b & c)
                    (h, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ s0 &+ maj)
                }
                h0 &+= a; h1 &+= b; h2 &+= c; h3 &+= d
                h4 &+= e; h5 &+= f; h6 &+= g; h7 &+= h
            }
        }
    }
}
