import CacheCore
import CacheReplay

/// What a replay did with one trace: its requests and time, and a row per combination it ran
/// (from `firstCombination` on: a shard may run only some).
struct ReplayedTrace {
    /// The trace's index among those the command names (0 for one FILE).
    var index = 0
    var name: String
    var requests: Int
    var duration: Int64
    var firstCombination = 0
    var rows: [ReplayRow]
}

/// `replay ... shard=I/N` and `replay-merge` (SPEC §5.5): a sweep's work split into N parts that
/// any job scheduler runs as N processes, on one machine or many, with no coordinator; the merge
/// joins their outputs into what one run prints and writes, byte for byte.
///
/// The work is a unit per (trace, combination), numbered trace by trace in the order the command
/// gives them; shard I of N takes the units from ⌊(I-1)·U/N⌋ up to ⌊I·U/N⌋, so every shard's part
/// is known from I, N and the command alone, and a trace is read only by the shards whose units
/// name it.
enum ReplayShards {
    /// Most parts a sweep is split into.
    static let maxShards = 10_000

    struct Shard: Equatable {
        /// From 1.
        var index: Int
        var count: Int

        /// Reads `I/N`; the offset is that of its first character.
        init(_ text: Substring, at offset: Int) throws(ShellError) {
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, let i = Self.number(parts[0]), let n = Self.number(parts[1]) else {
                throw ShellError("replay: shard=\(text): write it I/N, the I-th of N parts (shard=1/4), whole numbers", at: offset)
            }
            guard (1...ReplayShards.maxShards).contains(n) else {
                throw ShellError("replay: shard=\(text): a sweep is split into 1 to \(ReplayShards.maxShards) parts, not \(parts[1])", at: offset)
            }
            guard (1...n).contains(i) else {
                throw ShellError("replay: shard=\(text): the part is 1 to \(n), not \(parts[0])", at: offset)
            }
            index = i
            count = n
        }

        init(index: Int, count: Int) { self.index = index; self.count = count }

        /// Digits only (no sign, no spaces), at most 5 of them.
        private static func number(_ text: Substring) -> Int? {
            guard !text.isEmpty, text.utf8.count <= 5, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            return Int(text)
        }

        /// This part's units of a sweep of `units`. `units` is at most 10,000 traces times 256
        /// combinations, so the products stay far inside 64 bits.
        func units(of units: Int) -> Range<Int> {
            (index - 1) * units / count ..< index * units / count
        }

        var text: String { "\(index)/\(count)" }
    }

    // MARK: A shard's output

    /// A shard's reply: the traces it read and its rows, each naming its trace and combination;
    /// JSON also carries the whole sweep (`shard`), which `replay-merge` checks every part against.
    static func reply(_ shard: Shard, work: Range<Int>, _ results: [ReplayedTrace], source: String, several: Bool,
                      traces: [String], configurations: [ReplayConfiguration], namespace: String,
                      csvPath: (String, Int)?) throws(ShellError) -> Reply {
        let units = traces.count * configurations.count
        var rows: [JSONValue] = []
        var named: [(String, ReplayRow)] = []
        for trace in results {
            for (offset, row) in trace.rows.enumerated() {
                var object = ReplayCommands.rowObject(row)
                object["trace"] = .int(Int64(trace.index))
                object["combination"] = .int(Int64(trace.firstCombination + offset))
                if several { object["file"] = .string(trace.name) }
                rows.append(.object(object))
                named.append((trace.name, row))
            }
        }
        let header: [String: JSONValue] = [
            "index": .int(Int64(shard.index)),
            "count": .int(Int64(shard.count)),
            "units": .int(Int64(units)),
            "first_unit": .int(Int64(work.lowerBound)),
            "end_unit": .int(Int64(work.upperBound)),
            "source": .string(source),
            "several": .bool(several),
            "traces": .array(traces.map(JSONValue.string)),
            "combinations": .array(configurations.map { configuration in
                .object(configurationObject(configuration))
            }),
        ]
        var fields: [String: JSONValue] = [
            "namespace": .string(namespace),
            "shard": .object(header),
            "traces": .array(results.map { trace in
                .object(["trace": .int(Int64(trace.index)), "file": .string(trace.name),
                         "trace_requests": .int(Int64(trace.requests)), "duration_ms": .int(trace.duration)])
            }),
            "rows": .array(rows),
        ]
        var human = [work.isEmpty
            ? "shard \(shard.text): no work (the sweep has \(units) \(units == 1 ? "unit" : "units"), fewer than its parts)"
            : "shard \(shard.text): units \(work.lowerBound + 1) to \(work.upperBound) of \(units) (a unit: one combination on one trace)"]
        human += results.map(ReplayCommands.replayedLine(namespace: namespace))
        if !named.isEmpty {
            human += ReplayCommands.table(named.map(\.1), traces: several ? named.map(\.0) : nil)
        }
        if let (path, offset) = csvPath {
            let text = ReplayCommands.csvText(named.map(\.1), traces: several ? named.map(\.0) : nil)
            do { try FileIO.writeAtomically(path, text) } catch {
                throw ShellError("cannot write \(path): \(error)", at: offset)
            }
            fields["csv"] = .string(path)
            human.append("wrote \(path)")
        }
        return Reply(fields, human: human)
    }

    static func configurationObject(_ c: ReplayConfiguration) -> [String: JSONValue] {
        ["policy": .string(c.policy.rawValue),
         "max": c.max.map { .int(Int64($0)) } ?? .null,
         "ttl_ms": c.ttl.map(JSONValue.int) ?? .null,
         "stale_ms": c.stale.map(JSONValue.int) ?? .null]
    }

    // MARK: replay-merge

    static let merge = CommandSpec(
        name: "replay-merge",
        summary: "join the outputs of a sweep's shards (replay ... shard=I/N --json) into what one replay prints and writes",
        arguments: [CommandSpec.Argument.file(meaning: "a shard's output (cachesh --json -c 'replay ... shard=I/N' > FILE), a directory of them, or a pattern (parts/*.json); every part once, in any order").repeated],
        options: [
            .text("csv", placeholder: "FILE", meaning: "also write the rows as CSV, as replay's csv= would"),
            .text("plot", placeholder: "FILE", meaning: "also draw the sweep as replay's plot= would (one trace)"),
        ],
        example: "replay-merge parts/*.json csv=sweep.csv", run: runMerge)

    /// One shard's output, as read back.
    private struct Part {
        var file: String
        var shard: Shard
        var header: [String: JSONValue]
        var namespace: String
        var traces: [Int: (name: String, requests: Int, duration: Int64)]
        var rows: [(unit: Int, row: ReplayRow)]
    }

    static func runMerge(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: merge)
        try args.expect(1...Int.max, usage: "FILE...")
        var files: [(path: String, name: String, offset: Int)] = []
        for word in args.positional {
            let path = session.resolvePath(word.text, relativeTo: source)
            try session.touchFile("read", path, at: word.offset)
            let named = try ReplayCommands.traceFiles(word, path: path, verb: "replay-merge", what: "file") ?? [(path, word.text)]
            files += named.map { ($0.path, $0.name, word.offset) }
            if files.count > maxShards {
                throw ShellError("replay-merge: more than \(maxShards) files; a sweep has at most \(maxShards) parts", at: word.offset)
            }
        }
        let csvPath = try ReplayCommands.outputPath(args, "csv", session: session, source: source)
        let plotPath = try ReplayCommands.outputPath(args, "plot", session: session, source: source)
        try ReplayCommands.checkOutputs(args, verb: "replay-merge", csvPath: csvPath, plotPath: plotPath,
                                        inputs: files.map(\.path), session: session)

        var parts: [Part] = []
        for file in files {
            parts.append(try readPart(file.path, name: file.name, at: file.offset))
        }
        // Every part of one sweep, each once.
        let first = parts[0]
        var byIndex: [Int: String] = [:]
        for part in parts {
            for field in ["count", "units", "source", "several", "traces", "combinations"] where part.header[field] != first.header[field] {
                throw ShellError("replay-merge: \(part.file) is a part of another sweep than \(first.file) (its shard.\(field) differs)", at: command.offset)
            }
            if part.namespace != first.namespace {
                throw ShellError("replay-merge: \(part.file) is a part of another sweep than \(first.file) (its namespace differs)", at: command.offset)
            }
            if let other = byIndex.updateValue(part.file, forKey: part.shard.index) {
                throw ShellError("replay-merge: shard \(part.shard.text) is given twice (\(other) and \(part.file))", at: command.offset)
            }
        }
        let count = first.shard.count
        if let missing = (1...count).first(where: { byIndex[$0] == nil }) {
            let more = count - byIndex.count > 1 ? " (and \(count - byIndex.count - 1) more)" : ""
            throw ShellError("replay-merge: shard \(missing)/\(count) is missing\(more): \(byIndex.count) of \(count) parts given", at: command.offset)
        }
        guard case .array(let traceNames) = first.header["traces"]!, case .array(let combinationObjects) = first.header["combinations"]!,
              case .string(let sourceName) = first.header["source"]!, case .bool(let several) = first.header["several"]! else {
            throw ShellError("replay-merge: \(first.file): shard: not the output of replay ... shard=I/N", at: command.offset)
        }
        let combinations = combinationObjects.count
        var traces: [ReplayedTrace] = traceNames.enumerated().map { index, name in
            guard case .string(let name) = name else { return ReplayedTrace(index: index, name: "", requests: 0, duration: 0, rows: []) }
            return ReplayedTrace(index: index, name: name, requests: 0, duration: 0, rows: [])
        }
        var rows = [ReplayRow?](repeating: nil, count: traces.count * combinations)
        var seenTrace = [Bool](repeating: false, count: traces.count)
        for part in parts.sorted(by: { $0.shard.index < $1.shard.index }) {
            for (index, trace) in part.traces {
                guard index < traces.count, trace.name == traces[index].name else {
                    throw ShellError("replay-merge: \(part.file): traces: trace \(index) is not \(trace.name) in this sweep", at: command.offset)
                }
                if seenTrace[index] && (traces[index].requests != trace.requests || traces[index].duration != trace.duration) {
                    throw ShellError("replay-merge: \(part.file): \(trace.name) has \(trace.requests) requests over \(trace.duration) ms, another part's \(traces[index].requests) over \(traces[index].duration) ms (was the trace changed between the parts?)", at: command.offset)
                }
                seenTrace[index] = true
                traces[index].requests = trace.requests
                traces[index].duration = trace.duration
            }
            for (unit, row) in part.rows {
                guard unit < rows.count, rows[unit] == nil else {
                    throw ShellError("replay-merge: \(part.file): rows: unit \(unit) is not this part's, or is given twice", at: command.offset)
                }
                guard .object(configurationObject(row.configuration)) == combinationObjects[unit % combinations] else {
                    throw ShellError("replay-merge: \(part.file): rows: the row of unit \(unit) is not its combination's", at: command.offset)
                }
                rows[unit] = row
            }
        }
        for (unit, row) in rows.enumerated() {
            guard let row else {
                throw ShellError("replay-merge: the row of unit \(unit) (trace \(unit / combinations), combination \(unit % combinations)) is in no part", at: command.offset)
            }
            traces[unit / combinations].rows.append(row)
        }
        if several, let (_, offset) = plotPath {
            throw ShellError("replay-merge: plot= draws one trace; these parts replayed a directory or pattern", at: offset)
        }
        if let (_, offset) = plotPath, !traces[0].rows.contains(where: { $0.configuration.max != nil }) {
            throw ShellError("replay-merge: plot= draws hit ratio against max: this sweep has no size (no max=)", at: offset)
        }
        if several { return try ReplayCommands.severalReply(traces, namespace: first.namespace, csvPath: csvPath) }
        return try ReplayCommands.oneTraceReply(traces[0], source: sourceName, namespace: first.namespace,
                                                csvPath: csvPath, plotPath: plotPath)
    }

    /// Reads one shard's output: the one JSON line of a `replay ... shard=I/N` in it.
    private static func readPart(_ path: String, name: String, at offset: Int) throws(ShellError) -> Part {
        let text: String
        do { text = try FileIO.read(path) } catch {
            throw ShellError("cannot read \(name): \(error)", at: offset)
        }
        func bad(_ what: String) -> ShellError {
            ShellError("replay-merge: \(name): \(what)", at: offset)
        }
        var found: [String: JSONValue]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) where line.first == "{" {
            guard let value = try? JSONValue(parsing: String(line)), case .object(let object) = value,
                  object["command"] == .string("replay"), object["shard"] != nil else { continue }
            if found != nil { throw bad("holds two shards' outputs; give each part its own file") }
            found = object
        }
        guard let object = found else {
            throw bad("no shard's output in it (write one with: cachesh --json -c 'replay ... shard=I/N' > FILE)")
        }
        guard case .object(let header)? = object["shard"], case .string(let namespace)? = object["namespace"],
              case .int(let index)? = header["index"], case .int(let count)? = header["count"],
              case .int(let units)? = header["units"], case .int(let firstUnit)? = header["first_unit"],
              case .int(let endUnit)? = header["end_unit"], case .array(let traceNames)? = header["traces"],
              case .array(let combinations)? = header["combinations"], case .string? = header["source"],
              case .bool? = header["several"], case .array(let traceObjects)? = object["traces"],
              case .array(let rowObjects)? = object["rows"] else {
            throw bad("shard: not the output of replay ... shard=I/N (a field is missing or of another type)")
        }
        guard count >= 1, count <= maxShards, index >= 1, index <= count,
              units == Int64(traceNames.count) * Int64(combinations.count) else {
            throw bad("shard: index \(index) of \(count) over \(units) units does not describe a part of this sweep")
        }
        let shard = Shard(index: Int(index), count: Int(count))
        let work = shard.units(of: Int(units))
        guard Int64(work.lowerBound) == firstUnit, Int64(work.upperBound) == endUnit else {
            throw bad("shard: part \(shard.text) of \(units) units is units \(work.lowerBound) to \(work.upperBound), not \(firstUnit) to \(endUnit)")
        }
        var traces: [Int: (name: String, requests: Int, duration: Int64)] = [:]
        for (i, value) in traceObjects.enumerated() {
            guard case .object(let trace) = value, case .int(let t)? = trace["trace"], case .string(let file)? = trace["file"],
                  case .int(let requests)? = trace["trace_requests"], case .int(let duration)? = trace["duration_ms"],
                  t >= 0, t < Int64(traceNames.count), requests >= 0, duration >= 0 else {
                throw bad("traces[\(i)]: expected a trace's index, file, trace_requests and duration_ms")
            }
            traces[Int(t)] = (file, Int(requests), duration)
        }
        var rows: [(unit: Int, row: ReplayRow)] = []
        rows.reserveCapacity(rowObjects.count)
        for (i, value) in rowObjects.enumerated() {
            guard case .object(let row) = value, case .int(let t)? = row["trace"], case .int(let c)? = row["combination"],
                  t >= 0, t < Int64(traceNames.count), c >= 0, c < Int64(combinations.count),
                  let configuration = configuration(row), let counters = counters(row) else {
                throw bad("rows[\(i)]: expected a row of replay (its trace, combination, configuration and counters)")
            }
            let unit = Int(t) * combinations.count + Int(c)
            guard work.contains(unit), traces[Int(t)] != nil else {
                throw bad("rows[\(i)]: unit \(unit) is not one of this part's (\(work.lowerBound) to \(work.upperBound))")
            }
            rows.append((unit, ReplayRow(configuration: configuration, counters: counters)))
        }
        return Part(file: name, shard: shard, header: header, namespace: namespace, traces: traces, rows: rows)
    }

    private static func configuration(_ row: [String: JSONValue]) -> ReplayConfiguration? {
        guard case .string(let name)? = row["policy"], let policy = EvictionPolicy(rawValue: name) else { return nil }
        func optional(_ field: String, atLeast low: Int64) -> Int64?? {
            switch row[field] {
            case .null?: return .some(nil)
            case .int(let n)? where n >= low: return .some(n)
            default: return nil
            }
        }
        guard let max = optional("max", atLeast: 1), let ttl = optional("ttl_ms", atLeast: 0),
              let stale = optional("stale_ms", atLeast: 0) else { return nil }
        return ReplayConfiguration(policy: policy, max: max.map { Int($0) }, ttl: ttl, stale: stale)
    }

    private static func counters(_ row: [String: JSONValue]) -> ReplayCounters? {
        var values: [Int] = []
        for field in ["requests", "hits", "stale_hits", "misses", "evictions", "expirations"] {
            guard case .int(let n)? = row[field], n >= 0 else { return nil }
            values.append(Int(n))
        }
        return ReplayCounters(requests: values[0], hits: values[1], staleHits: values[2], misses: values[3],
                              evictions: values[4], expirations: values[5])
    }
}
