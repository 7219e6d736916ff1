import CacheShell

/// The JUnit XML report of `cachesh --explore ... --junit FILE` (SPEC §3.1), which CI systems show
/// per test: one test suite per scenario, one test case per property it checks (each `expect`,
/// then the built-in ones); the property a schedule broke fails with its message and the shrunk
/// transcript; a wrong scenario is one test case in error. No times or host names, so the same
/// run writes the same bytes.
enum ExploreJUnit {
    struct Scenario {
        var file: String
        /// The properties checked, as a failure names them.
        var properties: [String]
        var report: ExploreReport?
        /// Why the scenario could not be explored (`FILE:LINE: error: ...`).
        var error: String?
    }

    static func text(_ scenarios: [Scenario]) -> String {
        let escape = JUnitReport.escape
        var body = ""
        var tests = 0, failures = 0, errors = 0
        for scenario in scenarios {
            let name = escape(scenario.file)
            guard let report = scenario.report else {
                tests += 1
                errors += 1
                body += "  <testsuite name=\"\(name)\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\">\n"
                body += "    <testcase classname=\"\(name)\" name=\"scenario\">\n"
                body += "      <error message=\"the scenario is wrong\">\(escape(scenario.error ?? ""))</error>\n"
                body += "    </testcase>\n  </testsuite>\n"
                continue
            }
            let failed = report.failure?.failure.property
            var properties = scenario.properties
            if let failed, !properties.contains(failed) { properties.append(failed) }
            // A search that stopped at a failure, or by Ctrl-C, did not check the rest to the end.
            let cut = failed != nil || report.interrupted
            let skipped = cut ? properties.count - (failed == nil ? 0 : 1) : 0
            tests += properties.count
            failures += failed == nil ? 0 : 1
            body += "  <testsuite name=\"\(name)\" tests=\"\(properties.count)\" failures=\"\(failed == nil ? 0 : 1)\" errors=\"0\" skipped=\"\(skipped)\">\n"
            for property in properties {
                body += "    <testcase classname=\"\(name)\" name=\"\(escape(property))\">\n"
                if property == failed, let found = report.failure {
                    let text = found.failure.message + "\n\nshrunk to \(found.commands) commands (from \(found.commandsBeforeShrinking)):\n" + found.transcript
                    body += "      <failure message=\"\(escape(found.failure.message))\">\(escape(text))</failure>\n"
                } else if cut {
                    body += "      <skipped message=\"the search stopped \(report.interrupted ? "by Ctrl-C" : "at the first failure") before it was checked to the bound\"/>\n"
                } else {
                    body += "      <system-out>\(escape(ExploreCommands.humanLines(report).last ?? ""))</system-out>\n"
                }
                body += "    </testcase>\n"
            }
            body += "  </testsuite>\n"
        }
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += "<testsuites name=\"cachesh --explore\" tests=\"\(tests)\" failures=\"\(failures)\" errors=\"\(errors)\">\n"
        return xml + body + "</testsuites>\n"
    }
}
