@testable import cachesh
import Foundation
import Testing
import TestSupport

/// A script is looked through for a transcript's prompt line before it runs, read from its file
/// in chunks (`Batch.promptLine(fd:)`): it must find the line the in-memory search finds, at any
/// place of the chunks' bounds.
@Suite struct PromptLineTests {
    static func promptLine(inFile bytes: [UInt8]) throws -> Int? {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("prompt-\(UUID().uuidString).cachesh").path
        FileManager.default.createFile(atPath: path, contents: Data(bytes))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fd = open(path, O_RDONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        return Batch.promptLine(fd: fd)
    }

    static func promptLine(inMemory bytes: [UInt8]) -> Int? {
        bytes.withUnsafeBufferPointer { Batch.promptLine($0) }
    }

    @Test func theFileIsSearchedAsTheTextIs() throws {
        var generator = SeededGenerator(seed: 40)
        let pieces = ["cachesh> get a:1", "cachesh>", "cachesh>\r", "cachesh>x", "cachesh", "c", "cc", "\n", "\n", "\n", "\r\n",
                      "put feed:1 {\"a\":1}", "get c:1", " cachesh> x", "\u{0B}", "é"].map { Array($0.utf8) }
        for _ in 0..<400 {
            var bytes: [UInt8] = []
            for _ in 0..<Int(generator.next() % 30) { bytes += pieces[Int(generator.next() % UInt64(pieces.count))] }
            #expect(try Self.promptLine(inFile: bytes) == Self.promptLine(inMemory: bytes), "\(String(decoding: bytes, as: UTF8.self).debugDescription)")
        }
    }

    /// The line numbers a user sees in the error, for lines that are and are not a prompt's.
    @Test func theFirstPromptLineIsNamed() {
        let cases: [(String, Int?)] = [
            ("", nil), ("cachesh>", 1), ("cachesh> get a:1", 1), ("cachesh>\r\n", 1), ("cachesh>\r\rx", nil),
            ("put a:1 1\nget a:1\ncachesh>\n", 3), ("\n\n\ncachesh> x\ncachesh>", 4),
            ("cachesh", nil), ("cachesh>x\n cachesh> x\nCachesh> x\ncachesh\n>", nil), ("\ncachesh>", 2),
        ]
        for (text, line) in cases {
            #expect(Self.promptLine(inMemory: Array(text.utf8)) == line, "\(text.debugDescription)")
        }
    }

    /// Lines of a script's usual form up to a 64 KiB chunk's end, and a prompt line (or a line
    /// like one) just before, across or just after it.
    @Test func aPromptLineIsFoundAcrossTheChunksBounds() throws {
        let line = Array("put feed:1 {\"id\":1,\"title\":\"item 1\"}\n".utf8)
        var filler: [UInt8] = []
        while filler.count < 1 << 16 { filler += line }
        for tail in ["cachesh> get a:1\n", "cachesh>\n", "cachesh>", "cachesh>\r\n", "cachesh>x\n", "cachesh\n", "c\n", "\ncachesh> x",
                     "cachesh>\rx\n", "cachesh>\r"] {
            for cut in (1 << 16) - 12...(1 << 16) + 2 {
                let bytes = Array(filler[..<cut]) + [UInt8(ascii: "\n")] + Array(tail.utf8) + line
                let expected = Self.promptLine(inMemory: bytes)
                #expect(try Self.promptLine(inFile: bytes) == expected, "\(tail.debugDescription) at \(cut)")
            }
        }
        #expect(try Self.promptLine(inFile: filler + Array("cachesh> x".utf8)) == filler.count { $0 == UInt8(ascii: "\n") } + 1)
        #expect(try Self.promptLine(inFile: filler) == nil)
        // Three chunks and more: the line feeds of each chunk passed are counted once.
        let three = filler + filler + filler + Array("get a:1\ncachesh>\r\nput a:1 1\n".utf8)
        #expect(try Self.promptLine(inFile: three) == 3 * filler.count { $0 == UInt8(ascii: "\n") } + 2)
        #expect(try Self.promptLine(inFile: three) == Self.promptLine(inMemory: three))
    }
}
