import CacheCore
import CacheReplay

/// `replay FILE.har` (docs/SPEC.md §5.5, HAR logs): a network log through scratch caches with
/// HTTP namespaces; a row per entry (one combination) or per combination of the swept settings.
enum HARReplayCommands {
    /// The options of a trace that a HAR log has no use for.
    static let traceOnly = ["policy", "max", "ttl", "stale", "jobs", "time-unit", "step", "key", "time", "header", "ns"]

    /// The fields of a combination's row, in order (JSON, CSV and the table's columns).
    static let combinationFields = ["heuristic_percent", "shared", "naive", "override", "entries", "requests", "requests_saved",
                                    "bytes_saved", "bytes_fetched", "disagreements"]
        + HARDecision.allCases.map(\.totalName)

    /// Whether a replay of `path` reads a HAR log: `format=har`, or a name ending in `.har`.
    static func isHAR(_ args: Arguments, path: String) -> Bool {
        if let (text, _) = args.option("format") { return text == "har" }
        return path.lowercased().hasSuffix(".har")
    }

    static func replay(_ session: Session, _ cache: isolated Cache, _ args: Arguments, _ word: Word, path: String,
                       source: SourceFile) throws(ShellError) -> Reply {
        for name in traceOnly {
            guard let (_, option) = args.option(name) else { continue }
            throw ShellError("replay: \(name)= is for an access trace; a HAR log sweeps heuristic=, shared=, naive= and override=", at: option.offset)
        }
        let heuristics: [Int64?] = try list(args, "heuristic") { text, offset throws(ShellError) in
            guard let n = Int64(text), (0...HTTPNamespace.maxHeuristicPercent).contains(n) else {
                throw ShellError("replay: heuristic= is a percentage from 0 to 100, not \"\(text)\"", at: offset)
            }
            return n
        }
        let shareds: [Bool?] = try list(args, "shared") { text, offset throws(ShellError) in
            switch text {
            case "yes": return true
            case "no": return false
            default: throw ShellError("replay: shared=\(text): use yes or no (shared=no,yes sweeps both)", at: offset)
            }
        }
        let naives: [Set<NaivePolicy>?] = try list(args, "naive") { text, offset throws(ShellError) in
            if text == "none" { return [] }
            var set = Set<NaivePolicy>()
            for name in text.split(separator: "+", omittingEmptySubsequences: false) {
                guard let p = NaivePolicy(rawValue: String(name)) else {
                    throw ShellError("replay: naive=\(text): \"\(name)\" is no naive switch (none, or names of `help ns` joined by +)", at: offset)
                }
                set.insert(p)
            }
            return set
        }
        let overrides: [HAROverride?] = try list(args, "override") { text, offset throws(ShellError) in
            if text == "none" { return nil }
            switch HAROverride.parse(String(text)) {
            case .success(let o): return o
            case .failure(let e): throw ShellError("replay: " + e.message, at: offset)
            }
        }
        var count = 1
        for length in [heuristics.count, shareds.count, naives.count, overrides.count] {
            let (product, overflow) = count.multipliedReportingOverflow(by: length)
            count = overflow ? Int.max : product
        }
        if count > HARReplay.maxCombinations {
            throw ShellError("replay: \(count == Int.max ? "more than \(HARReplay.maxCombinations)" : String(count)) combinations; at most \(HARReplay.maxCombinations) in one replay", at: word.offset)
        }
        var combinations: [HARSettings] = []
        for h in heuristics { for s in shareds { for n in naives { for o in overrides {
            combinations.append(HARSettings(heuristicPercent: h, shared: s, naive: n, override: o))
        } } } }
        let csvPath = try ReplayCommands.outputPath(args, "csv", session: session, source: source)
        if let (_, offset) = try ReplayCommands.outputPath(args, "plot", session: session, source: source) {
            throw ShellError("replay: plot= draws a trace's hit ratio against max; a HAR log's combinations are in csv=", at: offset)
        }
        if let (target, offset) = csvPath {
            if FileIO.sameFile(target, path) {
                throw ShellError("replay: csv=\(args.option("csv")!.0) names the log itself; write the rows elsewhere", at: offset)
            }
            if let problem = session.storeFileProblem(target) { throw ShellError("cannot write \(target): \(problem)", at: offset) }
            do { try FileIO.checkWritable(target) } catch { throw ShellError("cannot write \(target): \(error)", at: offset) }
        }

        var bases: [String: HARNamespaceBase] = [:]
        var reserved: Set<String> = []
        for ns in cache.namespacePolicies() {
            reserved.insert(ns.name)
            if let origin = ns.policy.http?.origin, bases[origin] == nil {
                bases[origin.lowercased()] = HARNamespaceBase(name: ns.name, policy: ns.policy)
            }
        }
        let result: HARReplayResult
        do throws(HARError) {
            let reader = try HARReader(path: path)
            var log = HARLog(reader: reader, digests: false)
            let interrupted = session.options.interrupted ?? { false }
            result = try HARReplay.run(&log, bases: bases, reserved: reserved, combinations: combinations, interrupted: interrupted)
        } catch {
            throw ShellError("replay: \(word.text): " + error.message, at: word.offset)
        }

        let file = word.text
        let one = combinations.count == 1
        var fields: [String: JSONValue] = [
            "file": .string(file),
            "format": .string("har"),
            "entries": .int(Int64(result.entries)),
            "skipped": .int(Int64(result.skipped)),
            "warnings": .array(result.warnings.map(JSONValue.string)),
            "duration_ms": .int(result.durationMs),
            "namespaces": .array(result.namespaces.map { ns in
                .object(["name": .string(ns.name), "origin": .string(ns.origin), "shared": .bool(ns.shared),
                         "heuristic_percent": .int(ns.heuristicPercent)])
            }),
            // Built only where shown: a long log's rows are the human table's otherwise.
            "rows": .array(one && session.options.mode == .json ? result.rows.map { .object(rowObject($0)) } : []),
            "totals": one ? .object(totalsObject(result.totals[0])) : .null,
            "combinations": .array(zip(combinations, result.totals).map { .object(combinationObject($0, $1)) }),
        ]
        var human = result.warnings.map { "\(DiagnosticsFormatter.oneLine(file)): warning: \(DiagnosticsFormatter.oneLine($0))" }
        if result.skipped > result.warnings.count {
            let more = result.skipped - result.warnings.count
            human.append("\(DiagnosticsFormatter.oneLine(file)): warning: \(more) more \(more == 1 ? "entry" : "entries") skipped "
                         + "(the first \(HARReplay.maxWarnings) are shown)")
        }
        let namespaces = result.namespaces.map { "\($0.name) (\($0.origin))" }.joined(separator: ", ")
        human.append("replayed \(result.entries) \(result.entries == 1 ? "entry" : "entries") of \(DiagnosticsFormatter.oneLine(file)) "
                     + "over \(TimeText.formatDuration(result.durationMs)) of virtual time"
                     + (namespaces.isEmpty ? "" : ": " + namespaces))
        if one {
            human += ReplayCommands.alignedTable(header: ["index", "time", "method", "key", "status", "decision", "recorded", "agrees", "why"],
                                                 rows: result.rows.map(cells), numeric: [0, 4])
            human.append(totalsLine(result.totals[0]))
        } else {
            human += ReplayCommands.alignedTable(header: combinationFields, rows: zip(combinations, result.totals).map(combinationCells),
                                                 numeric: Set(4..<combinationFields.count))
        }
        if let (target, offset) = csvPath {
            var text = combinationFields.joined(separator: ",") + "\n"
            for (settings, totals) in zip(combinations, result.totals) {
                text += combinationCells(settings, totals).map(ReplayCommands.csvField).joined(separator: ",") + "\n"
            }
            do { try FileIO.writeAtomically(target, text) } catch { throw ShellError("cannot write \(target): \(error)", at: offset) }
            fields["csv"] = .string(target)
            human.append("wrote \(target)")
        }
        return Reply(fields, human: human)
    }

    /// A comma list option's items, each parsed by `parse`; `[nil]` (each namespace's own) when absent.
    private static func list<T>(_ args: Arguments, _ name: String,
                                _ parse: (Substring, Int) throws(ShellError) -> T?) throws(ShellError) -> [T?] {
        guard let (text, word) = args.option(name) else { return [nil] }
        var values: [T?] = []
        var offset = word.offset + name.utf8.count + 1
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard !item.isEmpty else { throw ShellError("replay: \(name)= has an empty item", at: offset) }
            values.append(try parse(item, offset))
            if values.count > HARReplay.maxCombinations {
                throw ShellError("replay: more than \(HARReplay.maxCombinations) combinations; at most \(HARReplay.maxCombinations) in one replay", at: word.offset)
            }
            offset += item.utf8.count + 1
        }
        return values
    }

    // MARK: Rendering

    static func rowObject(_ row: HARRow) -> [String: JSONValue] {
        [
            "index": .int(Int64(row.index)),
            "time_ms": .int(row.timeMs),
            "method": .string(row.method),
            "key": .string(row.key),
            "url": .string(row.url),
            "decision": .string(row.decision.rawValue),
            "why": .string(row.why),
            "cache_status": .string(row.cacheStatus),
            "status": row.status.map { .int(Int64($0)) } ?? .null,
            "sent": .int(Int64(row.sent)),
            "bytes": row.bytes.map { .int(Int64($0)) } ?? .null,
            "bytes_saved": .int(Int64(row.bytesSaved)),
            "recorded": row.recorded.map { .string($0.rawValue) } ?? .null,
            "agrees": row.agrees.map(JSONValue.bool) ?? .null,
        ]
    }

    static func totalsObject(_ t: HARTotals) -> [String: JSONValue] {
        var object: [String: JSONValue] = [
            "entries": .int(Int64(t.entries)),
            "requests": .int(Int64(t.requests)),
            "requests_saved": .int(Int64(t.requestsSaved)),
            "bytes_saved": .int(t.bytesSaved),
            "bytes_fetched": .int(t.bytesFetched),
            "disagreements": .int(Int64(t.disagreements)),
        ]
        for decision in HARDecision.allCases { object[decision.totalName] = .int(Int64(t.decisions[decision] ?? 0)) }
        return object
    }

    static func combinationObject(_ s: HARSettings, _ t: HARTotals) -> [String: JSONValue] {
        var object = totalsObject(t)
        object["heuristic_percent"] = s.heuristicPercent.map(JSONValue.int) ?? .null
        object["shared"] = s.shared.map(JSONValue.bool) ?? .null
        object["naive"] = s.naive.map { .string(naiveText($0)) } ?? .null
        object["override"] = .string(s.override?.text ?? "none")
        return object
    }

    static func naiveText(_ set: Set<NaivePolicy>) -> String {
        set.isEmpty ? "none" : set.sorted().map(\.rawValue).joined(separator: "+")
    }

    private static func combinationCells(_ s: HARSettings, _ t: HARTotals) -> [String] {
        var cells = [s.heuristicPercent.map { String($0) } ?? "-", s.shared.map { $0 ? "yes" : "no" } ?? "-",
                     s.naive.map(naiveText) ?? "-", s.override?.text ?? "none"]
        cells += [t.entries, t.requests, t.requestsSaved].map { String($0) }
        cells += [String(t.bytesSaved), String(t.bytesFetched), String(t.disagreements)]
        cells += HARDecision.allCases.map { String(t.decisions[$0] ?? 0) }
        return cells
    }

    private static func cells(_ row: HARRow) -> [String] {
        [String(row.index), TimeText.formatDuration(row.timeMs), row.method, DiagnosticsFormatter.oneLine(row.key),
         row.status.map { String($0) } ?? "-", row.decision.rawValue, row.recorded?.rawValue ?? "-",
         row.agrees.map { $0 ? "yes" : "NO" } ?? "-", DiagnosticsFormatter.oneLine(row.why)]
    }

    static func totalsLine(_ t: HARTotals) -> String {
        "totals: \(t.entries) \(t.entries == 1 ? "entry" : "entries"), \(t.requests) \(t.requests == 1 ? "request" : "requests") sent, "
            + "\(t.requestsSaved) saved, \(t.bytesSaved) bytes saved, \(t.bytesFetched) fetched; "
            + "\(t.disagreements) \(t.disagreements == 1 ? "disagreement" : "disagreements") with the recorded client"
    }
}
