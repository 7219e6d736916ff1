import CacheCore
import CacheShell

/// `cachesh --verify FILE...` and `--update`: replays transcripts, each in a fresh session, and
/// shows how they differ (SPEC §6).
///
/// For each command whose output differs it prints `@ FILE:LINE` and the unified diff `--update`
/// would apply, numbered in the file's own lines; a file that holds no command at all (empty, a
/// script, a Markdown file without a `cachesh` block) fails with `FILE: no commands`, so a wrong
/// file name cannot pass by accident. Then one line `N passed, N failed`, counting files. Exit status:
/// With `--safe`, a transcript's file commands (and those its `at` commands schedule) are refused
/// at their line as in a script, `FILE:LINE: error: --safe: ...`, and the file fails.
/// 0 when every file passes (or, with `--update`, every difference was written back), 1 when one
/// differs, 2 when a file cannot be read or written, or `--update` runs with `CI` set.
enum Verify {
    static func run(files: [String], update: Bool, safe: Bool, environment: ProcessEnvironment) -> Int32 {
        let terminal = Terminal()
        defer { terminal.flush() }
        if files.isEmpty { fail(usage: "--verify needs at least one transcript FILE") }
        if update && environment["CI"] != nil {
            terminal.write("cachesh: --update refuses to run when CI is set: a CI job must check transcripts, not rewrite them (unset CI to update)\n", isError: true)
            return 2
        }
        // Read every file first, so a typo in one name changes nothing.
        var texts: [String] = []
        var unreadable = false
        for file in files {
            do { texts.append(try FileIO.read(file)) } catch {
                terminal.write("cachesh: cannot read \(file): \(error)\n", isError: true)
                unreadable = true
            }
        }
        if unreadable { return 2 }

        var passed = 0, failed = 0, updated = 0
        var unwritable = false
        for (file, text) in zip(files, texts) {
            let check = Cache().withIsolation { TranscriptCheck(name: file, text: text, safe: safe, on: $0) }
            if check.transcript.steps.isEmpty {
                failed += 1
                terminal.write("\(file): no commands\n", isError: false)
                continue
            }
            if check.passed {
                passed += 1
                continue
            }
            failed += 1
            terminal.write(check.report(), isError: false)
            if let refusal = check.refusal {
                // Refused like a script's command; the replay stopped, so there is nothing to update.
                terminal.write(refusal + "\n", isError: true)
                continue
            }
            guard update else { continue }
            do {
                try FileIO.writeAtomically(file, check.updatedText())
                updated += 1
                for index in check.differences.indices {
                    terminal.write("updated \(file):\(check.updatedLine(of: index))\n", isError: false)
                }
            } catch {
                terminal.write("cachesh: cannot update \(file): \(error)\n", isError: true)
                unwritable = true
            }
        }
        terminal.write("\(passed) passed, \(failed) failed" + (update ? ", \(updated) updated" : "") + "\n", isError: false)
        if unwritable { return 2 }
        return failed == updated && (update || failed == 0) ? 0 : 1
    }
}
