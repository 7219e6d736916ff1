// The size limit of values (SPEC §7.1): a value's compact text is at most `JSONValue.maxBytes`
// bytes, wherever it comes from (typed, a file, the server, a snapshot or store, a patch's result).
//
// Counted in bytes of compact text, not in nodes: the text is what the cache keeps of a value
// (`StoredValue`), what a snapshot, a store row or `get` writes, so its length is what a value
// costs; a count of nodes would let one long string through.

extension JSONValue {
    /// The most bytes a value's compact text may take: 16 MiB, the longest command a script may
    /// hold (SPEC §6), so a value typed in one command fits unless its canonical form is longer.
    public static let maxBytes = 16 << 20

    /// Why the value may not be kept (its compact text is longer than `maxBytes`); nil when it may.
    /// - Complexity: O(min(size of the value, `maxBytes`)): counting stops at the limit, so a
    ///   tree that shares one subtree many times (a patch's result) is not printed to be measured.
    public var sizeProblem: String? {
        compactCount(atMost: Self.maxBytes) == nil ? Self.tooLarge : nil
    }

    /// The message for a value past the limit.
    public static var tooLarge: String { "the value is larger than 16 MiB (\(maxBytes) bytes of JSON)" }

    /// The number of bytes of `compactText`, or nil when it is more than `limit`.
    public func compactCount(atMost limit: Int) -> Int? {
        var left = limit
        return count(&left) ? limit - left : nil
    }

    /// Takes the compact text's bytes from `left`; false once they pass it.
    private func count(_ left: inout Int) -> Bool {
        switch self {
        case .null: left -= 4
        case .bool(let b): left -= b ? 4 : 5
        case .int(let n): left -= Self.digitCount(n)
        case .double(let d): left -= JSONValue.text(of: d).utf8.count
        case .string(let s): left -= JSONWriter.stringCount(s)
        case .array(let array):
            left -= array.isEmpty ? 2 : 1 + array.count
            for element in array {
                guard left >= 0, element.count(&left) else { return false }
            }
        case .object(let object):
            left -= object.isEmpty ? 2 : 1 + object.count
            for (key, child) in object {
                left -= JSONWriter.stringCount(key) + 1
                guard left >= 0, child.count(&left) else { return false }
            }
        }
        return left >= 0
    }

    /// The length of `String(n)`.
    private static func digitCount(_ n: Int64) -> Int {
        var length = n < 0 ? 2 : 1
        var rest = n.magnitude / 10
        while rest != 0 { length += 1; rest /= 10 }
        return length
    }
}
