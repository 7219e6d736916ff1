/// Copies of short runs of bytes in line, for the paths that copy a key, a reply's word or a
/// small value a command: `update(from:count:)` is a call to `memcpy` (its call and its own
/// branches on the size, some 20 instructions for a few bytes), and a loop of single bytes is
/// compiled into such a call again. (Public for the package's own modules: the shell copies its
/// replies' pieces and its keys with it, as the store's rows do theirs. Declared `package`, it
/// was not inlined into the shell.)
public enum ByteCopy {
    /// Copies `count` bytes from `source` to `target`: up to 16 with two loads and two stores,
    /// of 8, 4, 2 or 1 bytes, one from each end of the run (they overlap in its middle; no loop),
    /// both loads before the stores; a longer run with `copyMemory` (`memmove`).
    @inlinable @inline(__always)
    public static func copy(from source: UnsafeRawPointer, to target: UnsafeMutableRawPointer, count: Int) {
        if count >= 8 {
            guard count <= 16 else {
                target.copyMemory(from: source, byteCount: count)
                return
            }
            let last = count &- 8
            let a = source.loadUnaligned(as: UInt64.self), b = source.loadUnaligned(fromByteOffset: last, as: UInt64.self)
            target.storeBytes(of: a, as: UInt64.self)
            target.storeBytes(of: b, toByteOffset: last, as: UInt64.self)
        } else if count >= 4 {
            let last = count &- 4
            let a = source.loadUnaligned(as: UInt32.self), b = source.loadUnaligned(fromByteOffset: last, as: UInt32.self)
            target.storeBytes(of: a, as: UInt32.self)
            target.storeBytes(of: b, toByteOffset: last, as: UInt32.self)
        } else if count >= 2 {
            let last = count &- 2
            let a = source.loadUnaligned(as: UInt16.self), b = source.loadUnaligned(fromByteOffset: last, as: UInt16.self)
            target.storeBytes(of: a, as: UInt16.self)
            target.storeBytes(of: b, toByteOffset: last, as: UInt16.self)
        } else if count == 1 {
            target.storeBytes(of: source.load(as: UInt8.self), as: UInt8.self)
        }
    }
}
