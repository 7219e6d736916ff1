extension UnsafeBufferPointer where Element == UInt8 {
    /// Whether every byte is below 0x80 (so the bytes are UTF-8 as they stand), read eight at a
    /// time: a script's text and a store's values take the fast path when they are.
    public var isAllASCII: Bool {
        guard let base = baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        var i = 0
        var high: UInt64 = 0
        while i + 8 <= count {
            high |= raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < count {
            high |= UInt64(self[i])
            i += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }
}
