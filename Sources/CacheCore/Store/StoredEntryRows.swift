/// The entry rows of one commit as a store binds them (`StoreChanges.rows`): per row its id, its
/// recency stamp, and three runs of bytes one after another in one buffer (the key's UTF-8, the
/// value's compact text, and the row's `fields`: its times, sequence numbers, tags and extra,
/// `EntryRowFields`).
///
/// The engine writes each changed entry's row here straight from its slot (`takeChanges`): no
/// `StoredEntry` is built per row, and a store binds each column where the buffer keeps it. Row
/// i's key is `bytes[ends[3i - 1] ..< ends[3i]]` (from 0 for the first row), its value
/// `bytes[ends[3i] ..< ends[3i + 1]]`, its fields `bytes[ends[3i + 1] ..< ends[3i + 2]]`; the
/// buffer may be longer than its rows' bytes (room made ahead: zeros, or the bytes of rows
/// removed, `removeAll`).
public struct StoredEntryRows: Sendable {
    public internal(set) var rowIDs: [Int64] = []
    public internal(set) var recencies: [Int64] = []
    public internal(set) var bytes: [UInt8] = []
    public internal(set) var ends: [Int] = []

    public init() {}

    /// The rows of `entries`, in that order.
    public init(_ entries: [StoredEntry]) {
        reserveCapacity(entries.count)
        for e in entries { append(e) }
    }

    public var count: Int { rowIDs.count }
    public var isEmpty: Bool { rowIDs.isEmpty }
    /// The bytes the rows take (the rest of `bytes` is room).
    public var byteCount: Int { ends.last ?? 0 }

    /// Removes every row and keeps the room they took, so that the rows of a store's next commit
    /// are written where these were: a new buffer of that size is mapped anew by the allocator
    /// and comes as fresh pages, each faulted in and zeroed by the system on first touch (some
    /// 100 of them for a commit of 4,096 small rows, about a third of all the page faults of a
    /// batch of puts under `--store`).
    public mutating func removeAll() {
        rowIDs.removeAll(keepingCapacity: true)
        recencies.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
    }

    /// The bytes the buffers take, rows and room.
    public var heldBytes: Int {
        bytes.count + MemoryLayout<Int64>.stride * (rowIDs.capacity + recencies.capacity) + MemoryLayout<Int>.stride * ends.capacity
    }

    /// Room for `n` rows more (and a guess at their bytes: 96 a row, so that rows of a short key,
    /// a small object and their numbers, some 70 bytes, need no second buffer, whose making
    /// copies the first and fills the rest with zeros).
    public mutating func reserveCapacity(_ n: Int) {
        rowIDs.reserveCapacity(rowIDs.count + n)
        recencies.reserveCapacity(recencies.count + n)
        ends.reserveCapacity(ends.count + 3 * n)
        makeRoom(byteCount + n * 96)
    }

    /// Appends a row whose key, value and fields were written into `bytes`, ending at `keyEnd`,
    /// `valueEnd` and `fieldsEnd`.
    @inline(__always)
    mutating func appendRow(rowID: Int64, recency: Int64, keyEnd: Int, valueEnd: Int, fieldsEnd: Int) {
        rowIDs.append(rowID)
        recencies.append(recency)
        ends.append(keyEnd)
        ends.append(valueEnd)
        ends.append(fieldsEnd)
    }

    /// Appends `count` rows whose keys, values and fields were written into `bytes`: row i's
    /// id `ids[i]`, recency `recencies[i]` and ends `ends[3i]`, `ends[3i + 1]`, `ends[3i + 2]`.
    @inline(__always)
    mutating func appendRows(ids: UnsafePointer<Int64>, recencies: UnsafePointer<Int64>, ends: UnsafePointer<Int>, count: Int) {
        guard count > 0 else { return }
        rowIDs.append(contentsOf: UnsafeBufferPointer(start: ids, count: count))
        self.recencies.append(contentsOf: UnsafeBufferPointer(start: recencies, count: count))
        self.ends.append(contentsOf: UnsafeBufferPointer(start: ends, count: 3 * count))
    }

    /// Copies a key's UTF-8 bytes to `out` (room for them).
    /// - Returns: the bytes copied.
    @inline(__always)
    static func copyKey(_ key: String, to out: UnsafeMutablePointer<UInt8>) -> Int {
        let copied: Int? = key.utf8.withContiguousStorageIfAvailable { k -> Int in
            if let base = k.baseAddress { copyBytes(from: UnsafeRawPointer(base), to: out, count: k.count) }
            return k.count
        }
        if let copied { return copied }
        var n = 0
        for byte in key.utf8 {
            out[n] = byte
            n += 1
        }
        return n
    }

    /// Copies `count` bytes, a short run (a key, a small value) in line, where
    /// `update(from:count:)` is a call to `memcpy` (some 30 instructions for a 10-byte key): up to
    /// 16 bytes as `ByteCopy` does, up to 64 a word at a time and the last word ending where the
    /// run ends, overlapping what was copied before (a loop of single bytes for the rest was
    /// compiled into a call to `memcpy` again). The two runs must not overlap.
    @inline(__always)
    static func copyBytes(from source: UnsafeRawPointer, to: UnsafeMutablePointer<UInt8>, count: Int) {
        let target = UnsafeMutableRawPointer(to)
        guard count > 16 else {
            ByteCopy.copy(from: source, to: target, count: count)
            return
        }
        guard count <= 64 else {
            target.copyMemory(from: source, byteCount: count)
            return
        }
        var i = 0
        while i &+ 8 < count {
            target.storeBytes(of: source.loadUnaligned(fromByteOffset: i, as: UInt64.self), toByteOffset: i, as: UInt64.self)
            i &+= 8
        }
        let last = count &- 8
        target.storeBytes(of: source.loadUnaligned(fromByteOffset: last, as: UInt64.self), toByteOffset: last, as: UInt64.self)
    }

    /// Makes `bytes` at least `size` long (doubling, so appends are amortized O(1) a byte),
    /// keeping the bytes of the rows (`byteCount`).
    @inline(__always)
    mutating func makeRoom(_ size: Int) {
        if bytes.count < size { grow(size, keeping: byteCount) }
    }

    /// `makeRoom(size)` keeping the first `used` bytes: the rows' and those of rows written
    /// into `bytes` whose ends are not appended yet (`EntrySlots.appendPlainRows`).
    @inline(__always)
    mutating func makeRoom(_ size: Int, keeping used: Int) {
        if bytes.count < size { grow(size, keeping: used) }
    }

    @inline(never)
    private mutating func grow(_ size: Int, keeping used: Int) {
        // A new buffer of zeros (set at once, not a byte at a time, as appending a repetition
        // did: some 110 instructions a row of a commit) with the first `used` bytes.
        var grown = [UInt8](repeating: 0, count: max(size, 2 * bytes.count))
        grown.withUnsafeMutableBufferPointer { to in
            bytes.withUnsafeBufferPointer { from in
                if used > 0 { to.baseAddress!.update(from: from.baseAddress!, count: used) }
            }
        }
        bytes = grown
    }

    /// Appends a row built apart (tests, upgrades): its value's text as it is held.
    public mutating func append(_ e: StoredEntry) {
        rowIDs.append(e.rowID)
        recencies.append(e.recency)
        var out = Array(bytes[0 ..< byteCount])
        out.append(contentsOf: e.key.utf8)
        ends.append(out.count)
        e.withValueUTF8 { out.append(contentsOf: $0) }
        ends.append(out.count)
        EntryRowFields.append([e.storedAt, e.staleAt, e.expiresAt, e.seq, e.storedRequest, e.lastWrite, e.lastPut],
                              tags: e.tags, extra: e.extra, to: &out)
        ends.append(out.count)
        bytes = out
    }

    /// Row `i`'s bytes between ends `k - 1` and `k` (`k` = 3i, 3i + 1 or 3i + 2).
    @inline(__always)
    func range(_ k: Int) -> Range<Int> { (k == 0 ? 0 : ends[k - 1]) ..< ends[k] }

    /// Row `i`'s key.
    public func key(_ i: Int) -> String { String(decoding: bytes[range(3 * i)], as: UTF8.self) }

    /// Row `i` as a `StoredEntry` (its value as text); a row whose fields do not decode (never one
    /// the engine or `append` wrote) reads with every field 0 or absent.
    public subscript(i: Int) -> StoredEntry {
        let value = String(decoding: bytes[range(3 * i + 1)], as: UTF8.self)
        let decoded = bytes[range(3 * i + 2)].withUnsafeBytes { EntryRowFields.decode($0) }
        let f = decoded ?? EntryRowFields.Decoded()
        return StoredEntry(key: key(i), recency: recencies[i], value: value, storedAt: f.storedAt ?? 0, staleAt: f.staleAt,
                           expiresAt: f.expiresAt, seq: f.seq ?? 0, storedRequest: f.storedRequest ?? 0,
                           lastWrite: f.lastWrite ?? 0, lastPut: f.lastPut ?? 0, tags: f.tags, extra: f.extra,
                           rowID: rowIDs[i])
    }

    /// Every row as a `StoredEntry`, in order.
    public var entries: [StoredEntry] { (0..<count).map { self[$0] } }
}

/// Schema 8's `fields` column: an entry row's times, sequence numbers, tags and extra in one BLOB,
/// so a row is five columns (SQLite's work per row written or read grows with its columns: each
/// is bound, copied into a register, checked and encoded into the record one by one).
///
/// The bytes: a mask, whose bit i tells whether field i of `names` is present (bits 0-6: the
/// integers, an absent one a NULL, `stale_at` and `expires_at` for never; bit 7: tags; bit 8:
/// extra), as a number; then each present integer in that order as a number; then the tags, then
/// extra, each as its byte count (a number) and its UTF-8 bytes. A number is its 64 bits (two's
/// complement) in 7-bit groups, least significant first, each but the last with its high bit set
/// (1 to 10 bytes; a time in ms is 6, a small sequence number 1 to 3; a mask without tags or
/// extra is one byte). Anything else (cut short, a mask bit past 8 or a mask of two bytes whose
/// second is 0, a number past 64 bits, a count past the bytes, bytes left over) is not a row
/// cachesh wrote: opening refuses it.
public enum EntryRowFields {
    /// The fields, in the order of their bits.
    public static let names = ["stored_at", "stale_at", "expires_at", "seq", "stored_request", "last_write", "last_put", "tags", "extra"]

    /// The mask bits of the tags and extra.
    @usableFromInline static let tagsBit = 1 << 7
    @usableFromInline static let extraBit = 1 << 8

    /// The most bytes the mask and the integers take: a mask of two bytes and seven numbers of 10.
    public static let maxNumberBytes = 72

    /// A row's fields as decoded (nil: absent).
    public struct Decoded: Equatable, Sendable {
        public var storedAt: Int64?, staleAt: Int64?, expiresAt: Int64?, seq: Int64?
        public var storedRequest: Int64?, lastWrite: Int64?, lastPut: Int64?
        public var tags: String?, extra: String?
        @inlinable public init() {}

        /// The integers in the order of `names`.
        public var integers: [Int64?] { [storedAt, staleAt, expiresAt, seq, storedRequest, lastWrite, lastPut] }
    }

    /// Appends the encoding of `integers` (seven, one per integer name, nil for absent), `tags`
    /// and `extra`.
    public static func append(_ integers: [Int64?], tags: String?, extra: String?, to out: inout [UInt8]) {
        precondition(integers.count == 7, "seven integers")
        var mask = 0
        for (i, v) in integers.enumerated() where v != nil { mask |= 1 << i }
        if tags != nil { mask |= tagsBit }
        if extra != nil { mask |= extraBit }
        appendNumber(Int64(mask), to: &out)
        for v in integers { if let v { appendNumber(v, to: &out) } }
        for text in [tags, extra] {
            guard let text else { continue }
            appendNumber(Int64(text.utf8.count), to: &out)
            out.append(contentsOf: text.utf8)
        }
    }

    /// Writes the mask and integers of an entry's fields at `out` (room for `maxNumberBytes`; the
    /// engine's path: no list built, no capacity checked per byte); the tags' and extra's bits are
    /// set as given, their bytes to follow (`writeText`).
    /// - Returns: the bytes written.
    @inline(__always)
    public static func writeNumbers(storedAt: Int64, staleAt: Int64?, expiresAt: Int64?, seq: Int64, storedRequest: Int64,
                                    lastWrite: Int64, lastPut: Int64, tags: Bool, extra: Bool,
                                    into out: UnsafeMutablePointer<UInt8>) -> Int {
        let low: UInt8 = 0b1111001 | (staleAt == nil ? 0 : 0b10) | (expiresAt == nil ? 0 : 0b100)
        // Written through a pointer that moves on, not an offset kept in a variable a nested
        // function captures (which the loop of each number read and wrote in memory).
        var p = out
        if tags || extra {
            p[0] = low | 0x80
            p[1] = (tags ? 1 : 0) | (extra ? 2 : 0)
            p += 2
        } else {
            p[0] = low
            p += 1
        }
        p += writeNumber(UInt64(bitPattern: storedAt), into: p)
        if let t = staleAt { p += writeNumber(UInt64(bitPattern: t), into: p) }
        if let t = expiresAt { p += writeNumber(UInt64(bitPattern: t), into: p) }
        p += writeNumber(UInt64(bitPattern: seq), into: p)
        p += writeNumber(UInt64(bitPattern: storedRequest), into: p)
        p += writeNumber(UInt64(bitPattern: lastWrite), into: p)
        p += writeNumber(UInt64(bitPattern: lastPut), into: p)
        return out.distance(to: p)
    }

    /// Appends a text (the tags or extra) as its byte count and its bytes.
    public static func appendText(_ text: String, to out: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes in
            appendNumber(Int64(bytes.count), to: &out)
            out.append(contentsOf: bytes)
        }
    }

    /// The most bytes a text's count takes.
    public static let maxCountBytes = 10

    /// Writes a text (the tags or extra) as its byte count and its bytes at `out` (room for
    /// `maxCountBytes` and the bytes).
    /// - Returns: the bytes written.
    public static func writeText(_ text: UnsafeBufferPointer<UInt8>, into out: UnsafeMutablePointer<UInt8>) -> Int {
        let at = writeNumber(UInt64(text.count), into: out)
        if let start = text.baseAddress { (out + at).update(from: start, count: text.count) }
        return at + text.count
    }

    /// Writes `v` at `out` as `appendNumber` does: seven bits a byte, low first, the high bit set
    /// on every byte but the last (room for `maxCountBytes`).
    /// - Returns: the bytes written.
    @inline(__always)
    static func writeNumber(_ v: UInt64, into out: UnsafeMutablePointer<UInt8>) -> Int {
        // One byte, the commonest number (a small sequence number, a write never made): no loop.
        if v < 0x80 {
            out.pointee = UInt8(truncatingIfNeeded: v)
            return 1
        }
        var v = v
        var p = out
        repeat {
            p.pointee = UInt8(truncatingIfNeeded: v) | 0x80
            p += 1
            v &>>= 7
        } while v >= 0x80
        p.pointee = UInt8(truncatingIfNeeded: v)
        return out.distance(to: p) &+ 1
    }

    @inline(__always)
    static func appendNumber(_ n: Int64, to out: inout [UInt8]) {
        var v = UInt64(bitPattern: n)
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(truncatingIfNeeded: v))
    }

    /// The fields encoded in `bytes`, or nil when the bytes are not such an encoding. Reads at
    /// most `bytes.count` bytes; the tags' and extra's bytes are read as UTF-8 (invalid bytes
    /// repaired, as a `String` reads them).
    public static func decode(_ bytes: UnsafeRawBufferPointer) -> Decoded? {
        var d = Decoded()
        return decode(bytes, into: &d) ? d : nil
    }

    /// `decode` into `d` (whose fields are absent), for a reader of many rows: no optional
    /// result, each field read straight into its place.
    /// - Returns: false when the bytes are not such an encoding (`d` is then not to be used).
    @inlinable
    public static func decode(_ bytes: UnsafeRawBufferPointer, into d: inout Decoded) -> Bool {
        guard bytes.count > 0 else { return false }
        var mask = Int(bytes[0])
        var at = 1
        if mask & 0x80 != 0 {
            guard bytes.count > 1 else { return false }
            let second = Int(bytes[1])
            guard second != 0 && second < 4 else { return false }
            mask = mask & 0x7F | second << 7
            at = 2
        }
        if mask & 1 != 0 { guard let n = number(bytes, &at) else { return false }; d.storedAt = n }
        if mask & 2 != 0 { guard let n = number(bytes, &at) else { return false }; d.staleAt = n }
        if mask & 4 != 0 { guard let n = number(bytes, &at) else { return false }; d.expiresAt = n }
        if mask & 8 != 0 { guard let n = number(bytes, &at) else { return false }; d.seq = n }
        if mask & 16 != 0 { guard let n = number(bytes, &at) else { return false }; d.storedRequest = n }
        if mask & 32 != 0 { guard let n = number(bytes, &at) else { return false }; d.lastWrite = n }
        if mask & 64 != 0 { guard let n = number(bytes, &at) else { return false }; d.lastPut = n }
        if mask & (tagsBit | extraBit) != 0 {
            if mask & tagsBit != 0 { guard let t = text(bytes, &at) else { return false }; d.tags = t }
            if mask & extraBit != 0 { guard let t = text(bytes, &at) else { return false }; d.extra = t }
        }
        return at == bytes.count
    }

    /// The text (a byte count, then the bytes) at `at` (moved past it), or nil when the bytes end
    /// first.
    @usableFromInline
    static func text(_ bytes: UnsafeRawBufferPointer, _ at: inout Int) -> String? {
        guard let n = number(bytes, &at), n >= 0, n <= Int64(bytes.count - at) else { return nil }
        let t = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[at ..< at + Int(n)]), as: UTF8.self)
        at += Int(n)
        return t
    }

    /// The number at `at` (moved past it), or nil when the bytes end first or it has more than
    /// 64 bits (a tenth byte above 1, or an eleventh).
    @inlinable
    public static func number(_ bytes: UnsafeRawBufferPointer, _ at: inout Int) -> Int64? {
        var v: UInt64 = 0
        var shift: UInt64 = 0
        var i = at
        while i < bytes.count {
            let b = bytes[i]
            i &+= 1
            if b < 0x80 {
                if shift == 63 && b > 1 { return nil }
                at = i
                return Int64(bitPattern: v | UInt64(b) &<< shift)
            }
            if shift == 63 { return nil }
            v |= UInt64(b & 0x7F) &<< shift
            shift &+= 7
        }
        return nil
    }
}
