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
        let parts = command.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, readers.contains(String(parts[0])) else { return command }
        let path = String(parts[1])
        guard let first = path.first, first != "{", first != "/", first != "~", first != "\"" else { return command }
        let target = absolute(join(from ?? ".", path))
        let relative = relativePath(of: target, from: absolute(to ?? "."))
        return ([String(parts[0]), relative] + (parts.count > 2 ? [String(parts[2])] : [])).joined(separator: " ")
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
