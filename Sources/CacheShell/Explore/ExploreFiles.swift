import CacheCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files a scenario's commands read (`load FILE`, `restore FILE`, `source FILE`), kept in
/// the transcript as file references relative to where the transcript is, never inlined (SPEC
/// §3.1): the scenario resolves them against its own directory, `--verify` against the
/// transcript's.
enum ExploreFiles {
    /// The commands whose first word after the name is a file they read (or an inline document).
    static let readers: Set<String> = ["load", "restore", "source"]

    /// `command` with the path it reads, written relative to `from` (the scenario's directory),
    /// rewritten relative to `to` (the transcript's); unchanged when it reads no file, names an
    /// absolute or `~` path, or both directories are the same.
    static func relocated(_ command: String, from: String?, to: String?) -> String {
        guard from != to else { return command }
        // The path as the lexer reads it: a bare word, or a quoted one (`load "my config.json"`).
        var lexer = Lexer(SourceFile(name: nil, text: command), semicolonSeparates: false)
        guard case .success(let raw)? = lexer.next(), raw.words.count >= 2, readers.contains(raw.words[0].text) else { return command }
        let word = raw.words[1]
        let path = word.text
        guard word.kind != .json, let first = path.first, first != "/", first != "~" else { return command }
        let target = absolute(join(from ?? ".", path))
        let relative = relativePath(of: target, from: absolute(to ?? "."))
        // Written back as it came: bare while it can be, else quoted.
        let plain = word.kind == .bare && !relative.utf8.contains { $0 <= 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "#") || $0 == UInt8(ascii: ";") }
        let written = plain ? relative : JSONValue.string(relative).compactText
        let bytes = Array(command.utf8)
        return String(decoding: bytes[..<word.offset], as: UTF8.self) + written + String(decoding: bytes[word.end...], as: UTF8.self)
    }

    static func join(_ directory: String, _ path: String) -> String {
        directory.hasSuffix("/") ? directory + path : directory + "/" + path
    }

    /// `path` made absolute against the working directory, `.` and `..` resolved by name.
    static func absolute(_ path: String) -> String {
        var full = path
        if !path.hasPrefix("/") {
            var buffer = [CChar](repeating: 0, count: 4_096)
            var cwd = "/"
            if getcwd(&buffer, buffer.count) != nil {
                let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
                cwd = String(decoding: bytes, as: UTF8.self)
            }
            full = join(cwd, path)
        }
        var components: [Substring] = []
        for component in full.split(separator: "/") {
            switch component {
            case ".": continue
            case "..": if !components.isEmpty { components.removeLast() }
            default: components.append(component)
            }
        }
        return "/" + components.joined(separator: "/")
    }

    /// The path that leads from directory `base` to `target`, both absolute and normalized.
    static func relativePath(of target: String, from base: String) -> String {
        let t = target.split(separator: "/"), b = base.split(separator: "/")
        var common = 0
        while common < b.count && common < t.count && t[common] == b[common] {
            common += 1
        }
        let ups = Array(repeating: "..", count: b.count - common)
        return (ups + t[common...].map(String.init)).joined(separator: "/")
    }
}
