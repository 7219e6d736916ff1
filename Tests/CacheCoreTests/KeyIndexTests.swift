@_spi(Engine) @testable import CacheCore
import Testing

/// The key index on its own: keys in an array stand in for the entries' stored keys, and a test
/// hash stands in for `KeyIndex.hash` where collisions are wanted.
@Suite struct KeyIndexTests {
    /// An index over `keys` (slot = position), hashed by `hash`.
    final class Table {
        var index = KeyIndex()
        var keys: [String?] = []
        let hash: (String) -> UInt32

        init(hash: @escaping (String) -> UInt32 = KeyIndex.hash) { self.hash = hash }

        func slot(_ key: String) -> Int32? {
            index.find(hash: hash(key)) { keys[Int($0)] == key }
        }

        func add(_ key: String) {
            precondition(slot(key) == nil)
            keys.append(key)
            index.insert(hash: hash(key), slot: Int32(keys.count - 1))
        }

        @discardableResult
        func remove(_ key: String) -> Bool {
            guard let s = slot(key) else { return false }
            keys[Int(s)] = nil
            return index.remove(hash: hash(key), slot: s)
        }

        /// Every key still held leads to its slot, every removed one to nothing, and the table is sound.
        func check(sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(index.structureViolations() == [], sourceLocation: sourceLocation)
            for (i, key) in keys.enumerated() {
                guard let key else { continue }
                #expect(slot(key) == Int32(i), "\(key)", sourceLocation: sourceLocation)
            }
            #expect(index.count == keys.compactMap { $0 }.count, sourceLocation: sourceLocation)
        }
    }

    @Test func insertLookupAndRemove() {
        let t = Table()
        #expect(t.slot("a") == nil)
        t.add("a"); t.add("b"); t.add("feed:home")
        #expect(t.slot("a") == 0)
        #expect(t.slot("b") == 1)
        #expect(t.slot("feed:home") == 2)
        #expect(t.slot("feed:hom") == nil)
        #expect(t.remove("b"))
        #expect(t.slot("b") == nil)
        #expect(!t.remove("b"), "removing an absent key changes nothing")
        let wrongSlot = t.index.remove(hash: KeyIndex.hash("a"), slot: 7)
        #expect(!wrongSlot, "a key is removed only from its own slot")
        t.check()
    }

    @Test func growsAndKeepsEveryKey() {
        let t = Table()
        let start = t.index.bucketCount
        for i in 0..<10_000 { t.add("n:\(i)") }
        #expect(t.index.bucketCount > start)
        #expect(t.index.count * 4 <= t.index.bucketCount * 3, "never over three quarters full")
        t.check()
        for i in stride(from: 0, to: 10_000, by: 3) { #expect(t.remove("n:\(i)")) }
        t.check()
        for i in 10_000..<12_000 { t.add("n:\(i)") }
        t.check()
        #expect(t.slot("n:3") == nil)
        #expect(t.slot("n:4") == 4)
    }

    @Test func reservingRoomDoesNotGrowLater() {
        var index = KeyIndex(capacity: 1_000)
        let size = index.bucketCount
        for i in 0..<1_000 { index.insert(hash: UInt32(i * 7919 % 65_536), slot: Int32(i)) }
        #expect(index.bucketCount == size)
        #expect(index.structureViolations() == [])
    }

    /// Every key on the same home: one probe run, where a removal must keep the keys after it reachable.
    @Test func collidingKeysStayReachableThroughRemovals() {
        let t = Table(hash: { _ in 5 })
        for i in 0..<6 { t.add("k\(i)") }
        t.check()
        #expect(t.remove("k0"), "the first of the run")
        t.check()
        #expect(t.remove("k3"), "the middle")
        t.check()
        #expect(t.remove("k5"), "the last")
        t.check()
        t.add("k6")
        t.check()
        #expect(t.slot("k0") == nil)
        #expect(t.slot("k4") == 4)
    }

    /// Keys of different homes interleaved in one run that wraps past the table's end: a removal
    /// moves back only the keys whose probe passes the hole.
    @Test func backwardShiftRespectsHomesAndWrapsAround() {
        // 8 buckets before growth: homes 6, 7, 6, 0, 7 fill 6, 7, 0, 1, 2 (wrapping).
        let homes: [String: UInt32] = ["a": 6, "b": 7, "c": 6, "d": 0, "e": 7]
        let t = Table(hash: { homes[$0] ?? 3 })
        for k in ["a", "b", "c", "d", "e"] { t.add(k) }
        #expect(t.index.bucketCount == 8)
        t.check()
        #expect(t.remove("b"))
        t.check()
        #expect(t.remove("a"))
        t.check()
        t.add("f")
        t.check()
        #expect(t.remove("d"))
        t.check()
        #expect(t.slot("c") == 2)
        #expect(t.slot("e") == 4)
        #expect(t.slot("f") == 5)
    }

    /// Equal hashes of different keys: the stored key decides.
    /// Keys that `String` holds equal (canonically equivalent) are one key: they hash alike,
    /// though their bytes differ, and the engine finds the entry stored under either spelling.
    @Test func equalKeysSpelledDifferentlyHashAlike() throws {
        let pairs: [(String, String)] = [
            ("caf\u{E9}", "cafe\u{301}"),                 // é composed and decomposed
            ("a;b", "a\u{37E}b"),                          // U+037E is canonically ";"
            ("\u{212A}elvin", "Kelvin"),                   // the Kelvin sign is canonically "K"
            ("ns:\u{C5}ngstr\u{F6}m-long-key-of-many-bytes", "ns:A\u{30A}ngstro\u{308}m-long-key-of-many-bytes"),
        ]
        for (a, b) in pairs {
            #expect(a == b && Array(a.utf8) != Array(b.utf8))
            #expect(KeyIndex.hash(a) == KeyIndex.hash(b), "\(a)")
        }
        let engine = CacheEngine(origin: NoOrigin())
        engine.checksInvariants = true
        engine.put("a;b", .int(1))
        let read = try engine.get("a\u{37E}b")
        #expect(read.state == .fresh && read.value == .int(1))
        #expect(engine.count == 1)
    }

    /// `KeyIndex.asciiInNormalForm` is exactly the scalars that are not ASCII yet equal (as a
    /// `String`) to an ASCII character, by the standard library's own Unicode data: if a later
    /// Unicode gave another scalar such a form, this test names it.
    @Test func theScalarsEqualToASCIIAreTheOnesListed() {
        var ascii: [String: UInt8] = [:]
        for byte in UInt8(0)..<0x80 { ascii[String(UnicodeScalar(byte))] = byte }
        var found: [UInt32: UInt8] = [:]
        for value in UInt32(0x80)...0x10FFFF {
            guard let scalar = UnicodeScalar(value) else { continue }
            if let byte = ascii[String(scalar)] { found[value] = byte }
        }
        #expect(found == KeyIndex.asciiInNormalForm)
        for (value, byte) in found {
            let key = "ns:" + String(UnicodeScalar(value)!) + "x"
            let same = "ns:" + String(UnicodeScalar(byte)) + "x"
            #expect(key == same && KeyIndex.hash(key) == KeyIndex.hash(same))
        }
        // A key with other scalars besides goes to the standard library's hash, alike for both
        // spellings.
        #expect(KeyIndex.hash("\u{212A}\u{301}") == KeyIndex.hash("\u{1E30}"))
    }

    /// The one pass that canonicalizes and hashes a key agrees with `KeyName.canonical` and
    /// `KeyIndex.hash` taken in turn, for keys with and without the default namespace's prefix.
    @Test func canonicalKeyAndHashInOnePass() {
        let keys = ["home", "default:home", "default:", "default:default:x", "defaultx:y", "Default:home", "feed:1",
                    "default:caf\u{E9}", "caf\u{E9}", "n:123456", "a-rather-long-namespace:and-a-long-id-of-40-bytes-or-so", ""]
        for key in keys {
            let (canonical, hash) = KeyIndex.canonical(key)
            #expect(canonical == KeyName.canonical(key), "\(key)")
            #expect(hash == KeyIndex.hash(KeyName.canonical(key)), "\(key)")
        }
    }

    /// A key is used as its own canonical form only when every byte is ASCII, wherever the
    /// first other byte lies (the check rides on the hash's reads of the key, which must cover
    /// each byte): keys of every length up to 40 with one `é` at each place are not, and hash
    /// alike in either spelling.
    @Test func aByteThatIsNotASCIIIsSeenAnywhereInTheKey() {
        for n in 0...40 {
            let ascii = String(repeating: "k", count: n)
            #expect(KeyIndex.hashIfCanonical(ascii, KeyHash.seeds) == KeyIndex.hash(ascii), "\(n)")
            for p in 0...n {
                let (head, tail) = (String(repeating: "k", count: p), String(repeating: "k", count: n - p))
                let composed = head + "\u{E9}" + tail
                let decomposed = head + "e\u{301}" + tail
                #expect(KeyIndex.hashIfCanonical(composed, KeyHash.seeds) == nil, "\(n) \(p)")
                #expect(KeyIndex.hashIfCanonical(decomposed, KeyHash.seeds) == nil, "\(n) \(p)")
                #expect(KeyIndex.hash(composed) == KeyIndex.hash(decomposed), "\(n) \(p)")
            }
        }
    }

    /// Tables large enough to ask for huge pages hold what they would without: an array made
    /// that way, and one grown a step at a time past the threshold.
    @Test func largeTablesKeepTheirElements() {
        let n = HugePages.threshold / MemoryLayout<UInt64>.stride + 1000
        let zeros = HugePages.array(repeating: UInt64(7), count: n)
        #expect(zeros.count == n && zeros.allSatisfy { $0 == 7 })
        var grown: [Int32] = []
        for i in 0..<(2 * HugePages.threshold / MemoryLayout<Int32>.stride + 5) {
            HugePages.makeRoomForAppend(&grown)
            grown.append(Int32(truncatingIfNeeded: i))
        }
        #expect(grown.indices.allSatisfy { grown[$0] == Int32(truncatingIfNeeded: $0) })
        var reserved = [1, 2, 3]
        HugePages.reserve(&reserved, HugePages.threshold)
        #expect(reserved == [1, 2, 3] && reserved.capacity >= HugePages.threshold)
    }

    /// Keys that differ in one byte, or only in length, at every length up to 40 (the hash reads
    /// a short key's ends twice, overlapping): nearly all hash apart, and the low bits (the
    /// bucket) spread.
    @Test func nearKeysHashApart() {
        var hashes = Set<UInt32>()
        var buckets = Set<UInt32>()
        var n = 0
        for length in 0...40 {
            let base = String(repeating: "k", count: length)
            for variant in [base, base + "\u{0}", String(base.dropLast()) + "j", "j" + base.dropFirst()] {
                n += 1
                let h = KeyIndex.hash(variant)
                hashes.insert(h)
                buckets.insert(h & 0xFF)
            }
        }
        #expect(hashes.count >= n - 45, "\(n - hashes.count) collisions among \(n) keys")
        #expect(buckets.count > 60, "\(buckets.count) of 256 buckets used by \(n) keys")
        let ids = (0..<4096).map { KeyIndex.hash("n:\($0)") & 0xFFF }
        #expect(Set(ids).count > 2200, "4096 keys n:0... fill \(Set(ids).count) of 4096 buckets")
    }

    @Test func aHashMatchIsConfirmedByTheKey() {
        let t = Table(hash: { $0.hasPrefix("x") ? 1 : 2 })
        t.add("x1"); t.add("x2"); t.add("y")
        #expect(t.slot("x2") == 1)
        #expect(t.slot("x3") == nil)
        #expect(t.remove("x1"))
        #expect(t.slot("x2") == 1)
        t.check()
    }

    /// Random inserts and removals against a dictionary, with a hash of few values so that runs are long.
    @Test func randomOperationsAgreeWithADictionary() {
        let t = Table(hash: { UInt32(truncatingIfNeeded: $0.hashValue) & 0x3F })
        var model: [String: Int32] = [:]
        var rng = SplitMix64(seed: 42)
        for step in 0..<4_000 {
            let key = "k\(rng.next() % 300)"
            if model[key] != nil && rng.next() % 2 == 0 {
                #expect(t.remove(key))
                model[key] = nil
            } else if model[key] == nil {
                t.add(key)
                model[key] = Int32(t.keys.count - 1)
            }
            if step % 500 == 0 { t.check() }
        }
        for (key, slot) in model { #expect(t.slot(key) == slot) }
        t.check()
    }

    /// A broken probe chain (a bucket cut off from its home) is reported.
    @Test func aBrokenChainIsReported() {
        var index = KeyIndex()
        index.testingPlace(hash: 3, slot: 0)
        index.testingPlace(hash: 3, slot: 1)
        let removed = index.remove(hash: 3, slot: 0)
        #expect(removed)
        #expect(index.structureViolations() == [])
        index.testingPlace(hash: 3, slot: 1)
        #expect(index.structureViolations().contains("key index: slot 1 is held twice"))
    }

}
