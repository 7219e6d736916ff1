@_spi(Engine) @testable import CacheCore
import CacheServer
import Testing

/// The pieces the engine writes a store's rows with (`EntrySlots.appendPlainRows`): each writes
/// what the general encoder (`EntryRowFields.appendNumber`, an array's append) does.
@Suite struct StoreRowWritingTests {
    /// Every number, of each byte count from 1 to 10 (at both ends of each) and negative ones,
    /// is written as `appendNumber` appends it, with the count of bytes written.
    @Test func aNumberIsWrittenAsAppended() {
        var values: [UInt64] = [0, 1, 0x7F, 0x80, .max, 1 << 63, UInt64(bitPattern: -1), UInt64(bitPattern: -5)]
        for bits in stride(from: 7, through: 63, by: 7) {
            values += [(1 << UInt64(bits)) - 1, 1 << UInt64(bits), (1 << UInt64(bits)) + 1]
        }
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<200 { values.append(UInt64.random(in: 0 ... .max, using: &rng) >> UInt64.random(in: 0...63, using: &rng)) }
        for v in values {
            var expected: [UInt8] = []
            EntryRowFields.appendNumber(Int64(bitPattern: v), to: &expected)
            var out = [UInt8](repeating: 0xEE, count: 16)
            let n = out.withUnsafeMutableBufferPointer { EntryRowFields.writeNumber(v, into: $0.baseAddress!) }
            #expect(n == expected.count && Array(out[0 ..< n]) == expected, "\(v)")
            #expect(out[n...].allSatisfy { $0 == 0xEE }, "\(v): nothing written past the number")
        }
    }

    /// A value's held text, copied (`copyHeldUTF8`), is the text `withUTF8` lends, for texts held
    /// in line (up to 31 bytes) and apart; a value deeper than a document holds none.
    @Test func aValuesHeldTextIsItsText() {
        for n in 0 ... 100 {
            let value = StoredValue(.string(String(repeating: "é", count: n / 2) + String(repeating: "a", count: n % 2)))
            let count = value.heldUTF8Count
            let expected = value.withUTF8 { Array($0) }
            #expect(count == expected.count, "\(n)")
            var out = [UInt8](repeating: 0xEE, count: expected.count + 8)
            out.withUnsafeMutableBufferPointer { value.copyHeldUTF8(to: $0.baseAddress!) }
            #expect(Array(out[..<expected.count]) == expected && out[expected.count...].allSatisfy { $0 == 0xEE }, "\(n)")
        }
        var deep: JSONValue = 1
        for _ in 0 ..< JSONValue.documentDepth + 4 { deep = .array([deep]) }
        #expect(StoredValue(deep).heldUTF8Count == nil)
    }

    /// A copy of each length from 0 to 80 bytes (up to 16 as `ByteCopy` does, then whole words
    /// and a last word ending where the run ends; past 64 by `memcpy`), from several alignments,
    /// copies those bytes and nothing past them.
    @Test func aCopyCopiesItsBytesOnly() {
        let source = (0 ..< 100).map { UInt8($0 + 1) }
        for offset in 0 ..< 3 {
            for count in 0 ... 80 {
                var target = [UInt8](repeating: 0, count: 100)
                source.withUnsafeBytes { from in
                    target.withUnsafeMutableBufferPointer { to in
                        StoredEntryRows.copyBytes(from: from.baseAddress! + offset, to: to.baseAddress! + 1, count: count)
                    }
                }
                #expect(target[0] == 0 && Array(target[1 ..< 1 + count]) == Array(source[offset ..< offset + count]), "\(count)")
                #expect(target[(1 + count)...].allSatisfy { $0 == 0 }, "\(count): nothing written past the copy")
            }
        }
    }

    /// Runs of plain rows longer than the batch `EntrySlots.appendPlainRows` gathers before it
    /// appends them (`plainRowBatch`), broken by rows it leaves to the general path (tagged
    /// ones) at a batch's last row, right after a run of exactly one batch, in a batch's middle
    /// and at the end, with values long enough that the bytes' buffer grows in the middle of a
    /// run: every row reads back as put, and the rows are the bytes, ids and recencies the
    /// general encoding gives them.
    @Test func longRunsOfPlainRowsAcrossBatchesAreWrittenAsPut() {
        let batch = EntrySlots.plainRowBatch
        let engine = CacheEngine(origin: SimulatedServer())
        engine.checksInvariants = true
        engine.startTrackingChanges(everything: true)
        _ = engine.takeChanges()
        let tagged: Set<Int> = [batch - 1, 2 * batch, 2 * batch + 3, 3 * batch + 1, 5 * batch - 1]
        var expected: [String: String] = [:]
        for i in 0 ..< 5 * batch {
            let key = "p:\(i)"
            if tagged.contains(i) {
                engine.put(key, JSONValue.object(["id": .int(Int64(i))]), tags: ["t"])
                expected[key] = #"{"id":\#(i)}"#
            } else if i % 7 == 0 {
                let text = String(repeating: "long \(i) ", count: 100)
                engine.put(key, JSONValue.string(text))
                expected[key] = JSONValue.string(text).compactText
            } else {
                engine.put(key, JSONValue.object(["id": .int(Int64(i))]))
                expected[key] = #"{"id":\#(i)}"#
            }
        }
        let rows = engine.takeChanges().rows
        #expect(rows.count == 5 * batch)
        let entries = rows.entries
        var written: [String: String] = [:]
        for entry in entries { written[entry.key] = entry.value }
        #expect(written == expected)
        let taggedRows = entries.filter { $0.tags != nil }
        #expect(taggedRows.count == tagged.count)
        // (More bytes than the room made for the rows at first, 96 a row: the buffer grew.)
        #expect(rows.byteCount > 96 * rows.count && rows.bytes.count > 96 * rows.count)
        let again = StoredEntryRows(entries)
        let againBytes = Array(again.bytes[0 ..< again.byteCount]), rowBytes = Array(rows.bytes[0 ..< rows.byteCount])
        #expect(againBytes == rowBytes)
        #expect(again.ends == rows.ends)
        #expect(again.rowIDs == rows.rowIDs)
        #expect(again.recencies == rows.recencies)
    }
}
