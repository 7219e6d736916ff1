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
}
