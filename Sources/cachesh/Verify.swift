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
    static func run(files: [String], update: Bool, safe: Bool, junit: String? = nil, budget: ScheduledBudget? = .perInput,
                    environment: ProcessEnvironment) -> Int32 {
        let terminal = Terminal()
        defer { terminal.flush() }
        if files.isEmpty { fail(usage: "--verify needs at least one transcript FILE") }
        if update && environment["CI"] != nil {
            terminal.write("cachesh: --update refuses to run when CI is set: a CI job must check transcripts, not rewrite them (unset CI to update)\n", isError: true)
            return 2
        }
        // The report must not replace a transcript it reports on (under any name of it).
        if let junit, let file = files.first(where: { FileIO.sameFile(junit, $0) }) {
            terminal.write("cachesh: --junit \(junit) names the transcript \(file) being verified; write the report elsewhere\n", isError: true)
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
        // Each file's failure, nil when it passed, for --junit.
        var outcomes: [(file: String, failure: String?)] = []
        for (file, text) in zip(files, texts) {
            let check = Cache().withIsolation { TranscriptCheck(name: file, text: text, safe: safe, budget: budget, on: $0) }
            if check.transcript.steps.isEmpty {
                failed += 1
                terminal.write(VisibleText.of("\(file): no commands\n"), isError: false)
                outcomes.append((file, "\(file): no commands"))
                continue
            }
            if check.passed {
                passed += 1
                outcomes.append((file, nil))
                continue
            }
            failed += 1
            terminal.write(check.report(), isError: false)
            outcomes.append((file, check.report() + (check.refusal.map { $0 + "\n" } ?? "")))
            if let refusal = check.refusal {
                // Refused like a script's command; the replay stopped, so there is nothing to update.
                terminal.write(refusal + "\n", isError: true)
                continue
            }
            guard update else { continue }
            do {
                try FileIO.writeAtomically(file, check.updatedText())
                updated += 1
                for line in check.updatedLines {
                    terminal.write(VisibleText.of("updated \(file):\(line)\n"), isError: false)
                }
            } catch {
                terminal.write("cachesh: cannot update \(file): \(error)\n", isError: true)
                unwritable = true
            }
        }
        terminal.write("\(passed) passed, \(failed) failed" + (update ? ", \(updated) updated" : "") + "\n", isError: false)
        if let junit {
            do { try FileIO.writeAtomically(junit, JUnitReport.text(outcomes)) } catch {
                terminal.write("cachesh: cannot write \(junit): \(error)\n", isError: true)
                return 2
            }
        }
        if unwritable { return 2 }
        return failed == updated && (update || failed == 0) ? 0 : 1
    }
}

/// The JUnit XML report of a `--verify` run (`--junit FILE`), which CI systems show per test: one
/// test case per transcript, named by its file, a failing one carrying the diff `--verify`
/// printed. No times or host names, so the same run writes the same bytes.
enum JUnitReport {
    static func text(_ outcomes: [(file: String, failure: String?)]) -> String {
        let failures = outcomes.filter { $0.failure != nil }.count
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += "<testsuites name=\"cachesh --verify\" tests=\"\(outcomes.count)\" failures=\"\(failures)\">\n"
        xml += "  <testsuite name=\"transcripts\" tests=\"\(outcomes.count)\" failures=\"\(failures)\" errors=\"0\" skipped=\"0\">\n"
        for outcome in outcomes {
            let name = escape(outcome.file)
            guard let failure = outcome.failure else {
                xml += "    <testcase classname=\"transcripts\" name=\"\(name)\"/>\n"
                continue
            }
            let message = failure.hasSuffix(": no commands") ? "no commands" : "output differs"
            xml += "    <testcase classname=\"transcripts\" name=\"\(name)\">\n"
            xml += "      <failure message=\"\(message)\">\(escape(failure))</failure>\n"
            xml += "    </testcase>\n"
        }
        xml += "  </testsuite>\n</testsuites>\n"
        return xml
    }

    /// Text as XML character data or an attribute value: markup characters escaped, and the
    /// control characters XML 1.0 cannot hold replaced by U+FFFD.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            default:
                if scalar.value < 0x20 || (0xFFFE...0xFFFF).contains(scalar.value) {
                    out += "\u{FFFD}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
