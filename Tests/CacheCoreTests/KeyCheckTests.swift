@testable import CacheCore
import Testing

/// The byte-level check of plain ASCII keys decides exactly as the check by characters.
@Suite struct KeyCheckTests {
    /// Every key of up to four characters over an alphabet that reaches each rule: colons, `*`,
    /// white space, a control character, `tag`, name and non-name bytes, a non-ASCII letter.
    @Test func asciiFastPathAgreesWithTheCharacterCheck() {
        let alphabet: [String] = ["a", "t", "g", ":", "*", " ", "\t", "\u{7f}", "-", "/", "é", "9", "~"]
        var keys: [String] = [""]
        var frontier: [String] = [""]
        for _ in 0..<4 {
            frontier = frontier.flatMap { prefix in alphabet.map { prefix + $0 } }
            keys += frontier
        }
        keys += ["tag:x", "tags:x", "feed:1", "n:12345", "default:x", "a.b_c-d:e:f", "x:tag"]
        var plain = 0
        for key in keys {
            let slow = KeyName.characterProblem(withKey: key)
            if KeyName.isPlainASCIIKey(key) {
                plain += 1
                #expect(slow == nil, "\(key) passed the byte check but not: \(slow ?? "")")
            }
            #expect(KeyName.problem(withKey: key) == slow, "\(key)")
        }
        #expect(plain > 1000, "the byte check decides the common keys")
    }

    /// Every ASCII character and a few others, in each place of keys with and without a colon
    /// (a store file can hold any bytes in a key): the byte check passes only what the
    /// character check passes, and passes every plain key.
    @Test func everyCharacterInEveryPlace() {
        let templates = ["abcdefghij", "ns:abcdefgh", "a:b", "tag:abc", "feed:1:2", "x.y-z_w:id", "ab", "abcdefghijklmnopq:rstuvwxyz0123456789"]
        let characters = (0..<128).map { String(UnicodeScalar(UInt8($0))) } + ["é", "\u{a0}", "\u{2028}", "🙂"]
        var checked = 0
        for template in templates {
            let chars = Array(template)
            for place in 0...chars.count {
                for c in characters {
                    for replacing in [true, false] where !(replacing && place == chars.count) {
                        var k = chars
                        if replacing { k[place] = Character(c) } else { k.insert(Character(c), at: place) }
                        let key = String(k)
                        let slow = KeyName.characterProblem(withKey: key)
                        if KeyName.isPlainASCIIKey(key) { #expect(slow == nil, "\(key.debugDescription) passed the byte check but not: \(slow ?? "")") }
                        else if key.utf8.allSatisfy({ $0 < 0x80 }) { #expect(slow != nil, "\(key.debugDescription): a plain key the byte check refused") }
                        #expect(KeyName.problem(withKey: key) == slow, "\(key.debugDescription)")
                        checked += 1
                    }
                }
            }
        }
        #expect(checked > 10_000)
    }
}
