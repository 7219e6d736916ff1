import Foundation
import Testing

/// No file of the sources or tests is empty or comments only: a placeholder that holds no code
/// only hides that its folder has nothing to say.
@Suite struct NoPlaceholderFilesTests {
    @Test func everySwiftFileHoldsCode() throws {
        for folder in ["Sources", "Tests", "Benchmarks"] {
            for file in try DeclaredNamesTests.sources(under: folder) {
                let code = file.text.split(separator: "\n").contains { line in
                    let trimmed = line.trimmingCharacters(in: .whitespaces)
                    return !trimmed.isEmpty && !trimmed.hasPrefix("//")
                }
                #expect(code, "\(file.path) holds no code")
            }
        }
    }
}
