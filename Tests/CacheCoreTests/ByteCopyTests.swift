import CacheCore
import Testing

/// The short copies of keys, reply words and small values (`ByteCopy`).
struct ByteCopyTests {
    /// `ByteCopy.copy` of each length from 0 to 40 bytes (two copies from the ends of the run up
    /// to 16, `memcpy` past it), from several source and target offsets, copies those bytes and
    /// nothing around them.
    @Test func aShortCopyCopiesItsBytesOnly() {
        let source = (0 ..< 64).map { UInt8($0 + 1) }
        for from in 0 ..< 3 {
            for to in 1 ..< 4 {
                for count in 0 ... 40 {
                    var target = [UInt8](repeating: 0, count: 64)
                    source.withUnsafeBytes { s in
                        target.withUnsafeMutableBytes { t in ByteCopy.copy(from: s.baseAddress! + from, to: t.baseAddress! + to, count: count) }
                    }
                    #expect(Array(target[to ..< to + count]) == Array(source[from ..< from + count]), "\(count)")
                    #expect(target[..<to].allSatisfy { $0 == 0 } && target[(to + count)...].allSatisfy { $0 == 0 },
                            "\(count): nothing written around the copy")
                }
            }
        }
    }
}
