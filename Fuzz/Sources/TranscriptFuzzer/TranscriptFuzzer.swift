import CacheCore
import CacheShell
import Dispatch
import Synchronization

/// Reaches what a stranger's file reaches under `cachesh --safe --verify`: an input whose first
/// byte is even is checked as a transcript (every command replayed, its output compared), one
/// whose first byte is odd is the snapshot document of a `restore` (the snapshot decoder and its
/// checks), followed by commands that use what was restored (the clock, the sequence numbers, the
/// scheduled work). A crash, a hang (`-timeout=`) or an error line without its position stops the
/// run and leaves the input in `crash-*` / `timeout-*`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTranscript(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let asSnapshot = data[0] & 1 == 1
    let text = String(decoding: UnsafeBufferPointer(start: data + 1, count: size - 1), as: UTF8.self)
    let errors = Mutex<[String]>([])
    let done = DispatchSemaphore(value: 0)
    Task {
        if asSnapshot {
            let script = "restore " + text + "\nkeys\nput fuzz:a 1\nget fuzz:a\nadvance 1s\npending\nstats\nsnapshot\n"
            let lines = await Session.with(options: SessionOptions(safe: true)) { session, cache in
                session.keepsHistory = false
                session.run(SourceFile(name: "fuzz", text: script), semicolonsSeparate: false, on: cache)
                return session.takeOutput().filter(\.isError).map(\.text)
            }
            errors.withLock { $0 = lines }
        } else {
            // As `cachesh --safe --verify` replays it: with the scheduled-work budget of a
            // stranger's input (without it, `poll every=1ms` and `advance 16m` run for minutes).
            let check = Cache().withIsolation {
                TranscriptCheck(name: "fuzz.transcript", text: text, safe: true, budget: .perInput, on: $0)
            }
            // Only the report's rendering is exercised: a transcript may fail, never crash.
            _ = check.passed ? "" : check.report()
        }
        done.signal()
    }
    done.wait()
    for line in errors.withLock({ $0 }) {
        precondition(line.hasPrefix("fuzz:") && line.contains(": error: ") && line.utf8.last == UInt8(ascii: "\n"),
                     "error without a position: \(line.debugDescription)")
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
@_cdecl("TranscriptFuzzer_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var count = argc
    var arguments: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return runFuzzerDriver(&count, &arguments) { data, size in fuzzTranscript(data, size) }
}
