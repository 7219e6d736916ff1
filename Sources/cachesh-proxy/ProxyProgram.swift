import CacheCore
import CacheInspector
import CacheProxy
import CacheShell
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `cachesh proxy ...` (docs/SPEC.md §6, §8 Proxy): a caching reverse proxy until the process
/// ends. An executable of its own, installed beside `cachesh`, which `cachesh proxy` replaces
/// itself with (`exec`, the same process): so that SwiftNIO, swift-nio-ssl and BoringSSL are not
/// mapped and relocated at every start of `cachesh` (Benchmarks/README.md, "Start-up of the
/// shipped build"). Its arguments are those after `proxy`; what it prints, and its exit statuses,
/// are `cachesh proxy`'s.
@main
enum ProxyProgram {
    static func main() {
        // As `cachesh` refuses them before it runs this: an argument that is not UTF-8 would
        // reach the proxy repaired, each bad byte a U+FFFD.
        for i in 1..<Int(CommandLine.argc) {
            guard let raw = CommandLine.unsafeArgv[i] else { continue }
            let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(raw).assumingMemoryBound(to: UInt8.self), count: strlen(raw))
            if let bad = FileIO.firstInvalidUTF8(bytes) {
                fail(usage: "argument \(i + 1) is not UTF-8 text (byte \(FileIO.hexByte(bytes[bad]))): cachesh reads UTF-8")
            }
        }
        runProxy(Array(CommandLine.arguments.dropFirst()))
    }
}

/// Bad usage: one line on standard error, `cachesh: MESSAGE`, exit 2 (as `cachesh`'s own).
func fail(usage message: String) -> Never {
    _ = try? FileDescriptor.standardError.writeAll(VisibleText.of("cachesh: \(message)\n").utf8)
    exit(2)
}

func runProxy(_ arguments: [String]) -> Never {
    var options: ProxyOptions
    switch ProxyOptions.parse(arguments) {
    case .failure(let error):
        if error.message.hasPrefix("usage: ") {
            print(error.message)
            exit(0)
        }
        fail(usage: error.message)
    case .success(let (parsed, configPath)):
        options = parsed
        if let configPath {
            let text: String
            do { text = try FileIO.read(configPath) } catch { fail(usage: "proxy: cannot read \(configPath): \(error)") }
            do { options.configuration = try ConfigurationFile.cacheConfiguration(text: text) } catch {
                fail(usage: "proxy: \(configPath): \(error.message)")
            }
        }
    }
    if let path = options.recordPath {
        // Checked before listening, as record FILE checks its file: a target that cannot be
        // written is a usage error, not a lost recording at the end.
        do { try FileIO.checkWritable(path) } catch { fail(usage: "proxy: --record \(path): cannot write: \(error)") }
    }
    let inspect = options.inspect.map { place -> @Sendable (Cache) -> String? in
        { cache in
            let endpoint: InspectorEndpoint
            switch place {
            case .defaultSocket: endpoint = .unixSocket()
            case .socket(let path): endpoint = .unixSocket(path: path)
            case .loopback(let port): endpoint = .tcp(port: port)
            }
            // Said on standard output, beside the proxy's own `listening on` line.
            do throws(InspectorError) { _ = try CacheInspector.start(cache: cache, endpoint: endpoint, announce: { line in
                _ = try? FileDescriptor.standardOutput.writeAll((line + "\n").utf8)
            }) } catch {
                return error.description
            }
            return nil
        }
    }
    CachingProxy.main(options, write: { recording, path in
        do {
            try FileIO.writeAtomically(path, try RecordingTranscript.text(of: recording))
            return nil
        } catch {
            return "--record \(path): cannot write the transcript: \(error)"
        }
    }, inspect: inspect)
}
