import Foundation
import Testing

/// Output keeps types and never lets data drive the terminal (SPEC §4): strings print as JSON
/// text, and no control character from data or input reaches stdout or stderr raw, in any mode.
@Suite struct SafeOutputEndToEndTests {
    /// Bytes a terminal acts on: C0 controls but line feed and tab, DEL, and C1 controls.
    static func controlBytes(_ text: String) -> [UInt32] {
        text.unicodeScalars.map(\.value).filter { ($0 < 0x20 && $0 != 0x0A && $0 != 0x09) || (0x7F...0x9F).contains($0) }
    }

    static let hostile = """
        put a:1 "\\u001b]0;pwned\\u0007\\u001b[31mRED\\u009b2J\\u007f"
        get a:1
        peek a:1
        mget a:1
        server set b:1 "\\u001b[2Jwiped"
        server show b:1
        server show
        watch a:1
        put a:1 {"t": "\\u001b[5mblink"}
        keys
        echo \u{1B}[31mred echo\u{7}
        oops\u{1B}[2J
        put bad\u{1B}:1 1
        """

    @Test(arguments: [[], ["--json"], ["--safe"]])
    func noControlCharacterFromDataReachesTheTerminal(options: [String]) async throws {
        let run = try await Cachesh.script(Self.hostile, options: options)
        #expect(Self.controlBytes(run.stdout).isEmpty, "\(run.stdout.debugDescription)")
        #expect(Self.controlBytes(run.stderr).isEmpty, "\(run.stderr.debugDescription)")
        #expect(run.stdout.contains(#"\u001b]0;pwned\u0007\u001b[31mRED\u009b2J\u007f"#))
        #expect(run.status == 1, "the unknown command and the bad key fail")
    }

    @Test func humanOutputKeepsTypes() async throws {
        let run = try await Cachesh.script("""
            put n:1 1
            put n:2 "1"
            put n:3 null
            put n:4 "null"
            put n:5 ""
            get n:1
            get n:2
            mget n:3 n:4 n:5
            """)
        #expect(run.stdout.contains("value:         1\n"))
        #expect(run.stdout.contains("value:         \"1\"\n"))
        let table = run.stdout.split(separator: "\n").filter { $0.hasPrefix("n:") }.map { String($0.split(separator: " ").last!) }
        #expect(table == ["null", "\"null\"", "\"\""])
    }
}
