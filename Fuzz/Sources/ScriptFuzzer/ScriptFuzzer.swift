import CacheCore
import CacheShell
import Dispatch
import Synchronization

/// Runs one input as a script in a fresh `--safe` session (so no input touches a file) and traps
/// when an error line lacks its `fuzz:LINE: error:` position or spans lines.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzScript(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    // libFuzzer calls in synchronously: run the session on its cache and wait for its error lines.
    let errors = Mutex<[String]>([])
    let done = DispatchSemaphore(value: 0)
    Task {
        let lines = await Session.with(options: SessionOptions(safe: true)) { session, cache in
            session.keepsHistory = false
            session.run(SourceFile(name: "fuzz", text: text), semicolonsSeparate: size % 2 == 0, on: cache)
            return session.takeOutput().filter(\.isError).map(\.text)
        }
        errors.withLock { $0 = lines }
        done.signal()
    }
    done.wait()
    for line in errors.withLock({ $0 }) {
        precondition(line.hasPrefix("fuzz:") && line.contains(": error: ") && line.utf8.last == UInt8(ascii: "\n"),
                     "error without a position: \(line.debugDescription)")
        precondition(!line.dropLast().contains("\n"), "error on more than one line: \(line.debugDescription)")
    }
    return 0
}

/// libFuzzer's driver (from the `-sanitize=fuzzer` runtime).
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ test: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

/// The executable's entry point (SwiftPM names it `<target>_main`): hands over to libFuzzer.
@_cdecl("ScriptFuzzer_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var count = argc
    var arguments: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return runFuzzerDriver(&count, &arguments) { data, size in fuzzScript(data, size) }
}
