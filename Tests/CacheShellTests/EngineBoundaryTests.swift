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
        let base = root.appendingPathComponent(folder)
        guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else { return [] }
        var found: [String] = []
        for case let url as URL in walker where url.pathExtension == "swift" {
            let text = try String(contentsOf: url, encoding: .utf8)
            for (i, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains("CacheEngine") || line.contains("@_spi(Engine)") {
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
}
