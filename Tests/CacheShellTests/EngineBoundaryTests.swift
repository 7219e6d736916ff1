import Foundation
import Testing

/// The core's boundary: apps, the shell, the server and the store reach the cache only through
/// `actor Cache`. `CacheEngine` and its parts are `@_spi(Engine) public` (for tests and the
/// benchmark packages); the compiler keeps them out of any module that does not import the SPI,
/// and this test keeps the SPI import out of the modules that must not use it.
@Suite struct EngineBoundaryTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The source folders outside the core; each must name neither the engine nor its SPI.
    static let folders = ["Sources/CacheShell", "Sources/cachesh", "Sources/CacheServer", "Sources/CacheStore"]

    /// The lines of Swift files under `folder` that name the engine or import its SPI, as
    /// `path:line: text`.
    static func crossings(in folder: String) throws -> [String] {
        try lines(in: folder) { $0.contains("CacheEngine") || $0.contains("@_spi(Engine)") }
    }

    /// The lines of Swift files under `folder` for which `matches` holds, as `path:line: text`.
    static func lines(in folder: String, where matches: (Substring) -> Bool) throws -> [String] {
        let base = root.appendingPathComponent(folder)
        guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else { return [] }
        var found: [String] = []
        for case let url as URL in walker where url.pathExtension == "swift" {
            let text = try String(contentsOf: url, encoding: .utf8)
            for (i, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where matches(line) {
                found.append("\(folder)\(url.path.dropFirst(base.path.count)):\(i + 1): \(line)")
            }
        }
        return found
    }

    @Test(arguments: folders)
    func noEngineOutsideTheCore(folder: String) throws {
        var isFolder: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: Self.root.appendingPathComponent(folder).path, isDirectory: &isFolder)
                && isFolder.boolValue, "\(folder) is not a folder: the test would check nothing")
        let found = try Self.crossings(in: folder)
        #expect(found.isEmpty, "only `Cache` is the core's API here:\n\(found.joined(separator: "\n"))")
    }

    /// The check sees a crossing where there is one (the core names its engine everywhere).
    @Test func theCheckFindsTheEngineInTheCore() throws {
        #expect(try !Self.crossings(in: "Sources/CacheCore").isEmpty)
    }

    /// The simulated server's settings as a snapshot writes them: the server's to write and
    /// check (`PersistentOrigin.check`), unknown to the core, which keeps them as they were read.
    static let serverSettings = ["\"latency_ms\"", "\"latencies_ms\"", "\"online\"", "\"fail_next\"", "\"fail_keys\""]

    static func settingLines(in folder: String) throws -> [String] {
        try lines(in: folder) { line in serverSettings.contains { line.contains($0) } }
    }

    @Test func theCoreKnowsNoSettingOfTheSimulatedServer() throws {
        let found = try Self.settingLines(in: "Sources/CacheCore")
        #expect(found.isEmpty, "the server's settings are CacheServer's:\n\(found.joined(separator: "\n"))")
        // The check sees them where they are.
        #expect(try Self.settingLines(in: "Sources/CacheServer").count >= Self.serverSettings.count)
    }
}
