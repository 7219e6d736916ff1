import CacheCore
import CacheShell
import Testing
import TestSupport

/// Text and binary bodies (docs/SPEC.md §5.2, §8) in a snapshot: `body_text` and `body_binary`
/// beside the JSON form, restored to the same bytes; a message with two bodies, or a binary body
/// with a bad digest, is one error line that changes nothing.
@Suite struct HTTPBodyKindsTests {
    static let digest = String(repeating: "ab", count: 32)

    static func session() async -> (TestShell, String) {
        let shell = await TestShell()
        _ = await shell.typed("""
            ns api http
            server set api:/page text="<p>hi</p>" headers={"Cache-Control":"max-age=60"}
            server set api:/logo.png binary=2048:sha256:\(digest) headers={"Cache-Control":"max-age=60"}
            server set api:/feed {"n":1} headers={"Cache-Control":"max-age=60"}
            get api:/page
            get api:/logo.png
            get api:/feed
            """)
        return (shell, await shell.typed("snapshot"))
    }

    @Test func textAndBinaryBodiesRestoreToTheSameBytes() async {
        let (_, snapshot) = await Self.session()
        #expect(snapshot.contains("\"body_text\": \"<p>hi</p>\""), "\(snapshot)")
        #expect(snapshot.contains("\"body_binary\": {"), "\(snapshot)")
        #expect(snapshot.contains("\"sha256\": \"\(Self.digest)\""))
        #expect(snapshot.contains("\"body\": {"))
        let restored = await TestShell()
        let said = await restored.typed("restore " + snapshot.split(separator: "\n").joined(separator: " "))
        #expect(said.hasPrefix("restored (3 entries"), "\(said)")
        #expect(await restored.typed("snapshot") == snapshot)
        let read = await restored.typed("get api:/logo.png")
        #expect(read.contains("body:         binary 2048 bytes sha256:\(Self.digest)"), "\(read)")
        #expect(read.contains("cache_status: cachesh; hit"), "\(read)")
    }

    @Test(arguments: [
        ("\"body_text\": \"<p>hi</p>\"", "\"body_text\": \"<p>hi</p>\", \"body\": 1", "a message has one body: body and body_text are both given"),
        ("\"body_text\": \"<p>hi</p>\"", "\"body_text\": 7", "body_text: expected a string"),
        ("\"sha256\": \"\(String(repeating: "ab", count: 32))\"", "\"sha256\": \"XYZ\"", "body_binary.sha256: a SHA-256 digest is 64 lowercase hex digits"),
    ])
    func aBadBodyIsOneErrorAndChangesNothing(original: String, hostile: String, message: String) async {
        let (_, snapshot) = await Self.session()
        let bad = snapshot.replacingOccurrences(of: original, with: hostile)
        #expect(bad != snapshot)
        let shell = await TestShell()
        let before = await shell.typed("snapshot")
        let said = await shell.typed("restore " + bad.split(separator: "\n").joined(separator: " "))
        #expect(said.contains(message), "\(said)")
        #expect(await shell.typed("snapshot") == before)
    }
}
