import CacheShell

/// Runs one input as a script in a fresh `--safe` session (so no input touches a file) and traps
/// when an error line lacks its `fuzz:LINE: error:` position or spans lines.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzScript(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let session = Session(options: SessionOptions(safe: true))
    session.keepsHistory = false
    session.run(SourceFile(name: "fuzz", text: text), semicolonsSeparate: size % 2 == 0)
    for (line, isError) in session.takeOutput() where isError {
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
