import CacheCore
import CacheReplay
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `replay FILE`: an access trace through scratch caches, one per combination of the swept
/// options; the session's cache, clock, statistics and server log are not touched.
enum ReplayCommands {
    static let replay = CommandSpec(
        name: "replay",
        summary: "replay an access trace through scratch caches, one row per combination; the session is unchanged",
        arguments: [.file(meaning: "the trace, streamed (gzip- or zstd-compressed too): one get of the namespace's key per request, on a server that has every key and answers at once; a directory or a pattern (*.csv): each of its files, a row per (trace, combination); a HAR log (FILE.har): each entry through HTTP namespaces, a row per entry saying what the cache did, why, and whether the recorded client agrees")],
        options: [
            .text("ns", placeholder: "NAME", meaning: "the namespace whose ttl, stale, max and policy are the defaults (default: default)"),
            .text("format", placeholder: "F", meaning: "keys (KEY per line), timed (TIME KEY per line), csv (a header, then rows), oracle (libCacheSim oracleGeneral) or har (an HTTP Archive network log); default by extension: .csv, .oracleGeneral or .bin (before .gz or .zst), .har, else keys"),
            .text("time-unit", placeholder: "U", meaning: "the unit of the trace's times: s (default), ms or us"),
            .duration("step", meaning: "the clock's step per request when the trace has no times (default 1ms)"),
            .text("key", placeholder: "COL", meaning: "CSV: the key column, by name or number, 1 the first (default key)"),
            .text("time", placeholder: "COL", meaning: "CSV: the time column, by name or number (default time, if the header has it)"),
            .text("header", placeholder: "yes|no", meaning: "CSV: no when the first line is a row, not a header; then key= (and time=) are column numbers"),
            .text("policy", placeholder: "P,...", meaning: "eviction policies: lru, fifo, sieve, lfu, optimal (Belady; needs format=oracle); default: the namespace's"),
            CommandSpec.Option(name: "max", placeholder: "N,...", kind: .count, meaning: "entry limits to sweep; LOW..HIGH: ten sizes per decade from LOW to HIGH; none: no limit"),
            CommandSpec.Option(name: "ttl", placeholder: "D,...", kind: .duration, meaning: "ttls to sweep; none: never expire"),
            CommandSpec.Option(name: "stale", placeholder: "D,...", kind: .duration, meaning: "stale thresholds to sweep; none: never stale by age"),
            CommandSpec.Option(name: "jobs", placeholder: "N", kind: .count, meaning: "run the combinations on N threads at once, 1 to 64 (default 1); the output is the same for any N"),
            .text("shard", placeholder: "I/N", meaning: "run only the I-th of N equal parts of the work (a unit: one combination on one trace), for replay-merge; run it with --json into a file"),
            .text("csv", placeholder: "FILE", meaning: "also write the rows as CSV"),
            .text("plot", placeholder: "FILE", meaning: "also draw hit ratio and requests to the server against max as SVG, one line per policy"),
            .text("heuristic", placeholder: "P,...", meaning: "HAR: heuristic freshness percentages to sweep (0 to 100)"),
            .text("shared", placeholder: "no,yes", meaning: "HAR: replay as a private cache (no), a shared one (yes), or both"),
            .text("naive", placeholder: "N,...", meaning: "HAR: naive switches to sweep: none, or names joined by + (naive=none,serve-expired)"),
            .text("override", placeholder: "O,...", meaning: "HAR: Cache-Control overrides to sweep: none, or PATTERN:DIRECTIVES (/img/*:max-age=0+-no-cache; -NAME drops one)"),
        ],
        example: "replay trace.txt max=50,500 stale=1m,5m", run: replay)

    /// The fields of a row, in order (JSON, CSV and the table's columns).
    static let rowFields = ["policy", "max", "ttl_ms", "stale_ms", "requests", "hits", "stale_hits", "misses",
                            "evictions", "expirations", "hit_ratio"]
    /// Most combinations one replay runs (each holds a scratch cache).
    static let maxCombinations = 256

    static func replay(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, for: Self.replay)
        try args.expect(1...1, usage: "FILE")
        let word = args.positional[0]
        let path = session.resolvePath(word.text, relativeTo: source)
        try session.touchFile("read", path, at: word.offset)
        if HARReplayCommands.isHAR(args, path: path) {
            return try HARReplayCommands.replay(session, cache, args, word, path: path, source: source)
        }
        for name in ["heuristic", "shared", "naive", "override"] {
            guard let (_, option) = args.option(name) else { continue }
            throw ShellError("replay: \(name)= is for a HAR log (FILE.har or format=har); an access trace sweeps policy=, max=, ttl= and stale=", at: option.offset)
        }
        // A directory or a pattern: several traces, a row per (trace, combination).
        let traces = try traceFiles(word, path: path)
        let several = traces != nil

        var namespace = KeyName.defaultNamespace
        if let (text, word) = args.option("ns") {
            if let problem = KeyName.problem(withNamespace: String(text)) {
                throw ShellError("replay: bad namespace name \"\(text)\": \(problem)", at: word.offset + 3)
            }
            namespace = String(text)
        }
        let policy = cache.policy(of: namespace)
        let traceOptions = try readOptions(args, path: path)
        let policies: [EvictionPolicy] = try list(args, "policy", default: [EvictionPolicy(policy.eviction)]) { text, offset throws(ShellError) in
            guard let p = EvictionPolicy(rawValue: String(text)) else {
                throw ShellError("replay: policy=\(text): use lru, fifo, sieve, lfu or optimal", at: offset)
            }
            return p
        }
        // Distinct sizes, kept in order with a set as each item is read; past the combination
        // limit none is kept (the count is refused below whatever the other lists hold), so a
        // long line of ranges costs time in its length and no memory beyond the limit.
        var sizes: [Int?] = []
        var seen: Set<Int?> = []
        try eachItem(args, "max") { text, offset throws(ShellError) in
            var items: [Int?]
            let parts = text.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
            if text == "none" {
                items = [nil]
            } else if parts.count == 3 && parts[1].isEmpty {
                guard let low = Int(parts[0]), let high = Int(parts[2]), low >= 1, high > low else {
                    throw ShellError("replay: max=\(text): a range is LOW..HIGH, whole numbers with 1 <= LOW < HIGH", at: offset)
                }
                items = curve(from: low, to: high)
            } else {
                guard let n = Int(text), n >= 1 else {
                    throw ShellError("replay: max=\(text): use a whole number of entries, at least 1, a range LOW..HIGH, or none", at: offset)
                }
                items = [n]
            }
            for size in items where sizes.count <= maxCombinations && seen.insert(size).inserted { sizes.append(size) }
        }
        if args.option("max") == nil { sizes = [policy.max] }
        let ttls: [Int64?] = try list(args, "ttl", default: [policy.ttl]) { text, offset throws(ShellError) in
            try Arguments.durationOrNone(text, at: offset)
        }
        let stales: [Int64?] = try list(args, "stale", default: [policy.stale]) { text, offset throws(ShellError) in
            try Arguments.durationOrNone(text, at: offset)
        }
        // The count is the product of the lists' lengths, checked before any combination is built
        // (a long line of lists used to build millions of them first).
        var count = 1
        for length in [policies.count, sizes.count, ttls.count, stales.count] {
            let (product, overflow) = count.multipliedReportingOverflow(by: length)
            count = overflow ? Int.max : product
        }
        if count > maxCombinations {
            let what = sizes.count > maxCombinations || count == Int.max ? "more than \(maxCombinations)" : "\(count)"
            throw ShellError("replay: \(what) combinations; at most \(maxCombinations) in one replay", at: command.offset)
        }
        var configurations: [ReplayConfiguration] = []
        for p in policies { for m in sizes { for t in ttls { for s in stales {
            configurations.append(ReplayConfiguration(policy: p, max: m, ttl: t, stale: s))
        } } } }
        let files = try (traces ?? [(path, word.text)]).map { trace throws(ShellError) in
            (path: trace.path, name: trace.name, options: several ? try readOptions(args, path: trace.path) : traceOptions)
        }
        if policies.contains(.optimal), let file = files.first(where: { $0.options.format != .oracle }) {
            let which = several ? " (\(file.name) is format=\(file.options.format.rawValue))" : ""
            throw ShellError("replay: policy=optimal needs each request's next access: use a format=oracle trace" + which, at: args.options["policy"]!.offset)
        }
        var jobs = 1
        if let (text, word) = args.option("jobs") {
            guard let n = Int(text), (1...Replay.maxJobs).contains(n) else {
                throw ShellError("replay: jobs=\(text): use a whole number of jobs from 1 to \(Replay.maxJobs)", at: word.offset)
            }
            jobs = n
        }
        var shard: ReplayShards.Shard?
        if let (text, word) = args.option("shard") { shard = try ReplayShards.Shard(text, at: word.offset + 6) }
        let csvPath = try outputPath(args, "csv", session: session, source: source)
        let plotPath = try outputPath(args, "plot", session: session, source: source)
        if shard != nil, let (_, offset) = plotPath {
            throw ShellError("replay: plot= draws the whole sweep: give it to replay-merge, not to a shard", at: offset)
        }
        if several, let (_, offset) = plotPath {
            throw ShellError("replay: plot= draws one trace; give it one FILE, not a directory or pattern", at: offset)
        }
        if let (_, offset) = plotPath, !sizes.contains(where: { $0 != nil }) {
            throw ShellError("replay: plot= draws hit ratio against max: give max= a size (this namespace has no max)", at: offset)
        }

        try checkOutputs(args, csvPath: csvPath, plotPath: plotPath, inputs: files.map(\.path), session: session)

        // The work is a unit per (trace, combination), trace by trace; a shard does its part, and
        // reads only the traces its units name. Without shard= it is all of it.
        let combinations = configurations.count
        let work = shard.map { $0.units(of: files.count * combinations) } ?? 0..<(files.count * combinations)
        var results: [ReplayedTrace] = []
        do {
            let interrupted = session.options.interrupted ?? { false }
            var line = session.options.progress.map { ProgressLine(show: $0) }
            defer { line?.end() }
            for (index, file) in files.enumerated() {
                let first = Swift.max(work.lowerBound - index * combinations, 0)
                let end = Swift.min(work.upperBound - index * combinations, combinations)
                guard first < end else { continue }
                let reader = try TraceReader(path: file.path, name: file.name, options: file.options)
                let result = try Replay.run(reader, configurations: Array(configurations[first..<end]), jobs: jobs, interrupted: interrupted) { requests in
                    line?.update(progressText(file.name, requests: requests, position: reader.position, size: reader.size))
                }
                results.append(ReplayedTrace(index: index, name: file.name, requests: result.requests, duration: result.duration,
                                             firstCombination: first, rows: result.rows))
            }
        } catch {
            guard let line = report(error, session: session) else {
                throw ShellError("replay: " + (error.file.map { "\($0): " } ?? "") + error.message, at: word.offset)
            }
            session.add(line)
            return .failedWithin
        }
        if let shard {
            return try ReplayShards.reply(shard, work: work, results, source: word.text, several: several,
                                          traces: files.map(\.name), configurations: configurations,
                                          namespace: namespace, csvPath: csvPath)
        }
        if several { return try severalReply(results, namespace: namespace, csvPath: csvPath) }
        return try oneTraceReply(results[0], source: word.text, namespace: namespace, csvPath: csvPath, plotPath: plotPath)
    }

    /// Checks csv= and plot= before the replay, so one that cannot be written leaves the other
    /// unwritten too (csv= used to be written and plot= then refused), and neither overwrites an
    /// input (a trace, or a shard `replay-merge` reads).
    static func checkOutputs(_ args: Arguments, verb: String = "replay", csvPath: (String, Int)?, plotPath: (String, Int)?,
                             inputs: [String], session: Session) throws(ShellError) {
        var targets: [(path: String, offset: Int, option: String)] = []
        if let (path, offset) = csvPath { targets.append((path, offset, "csv")) }
        if let (path, offset) = plotPath { targets.append((path, offset, "plot")) }
        for target in targets {
            if inputs.contains(where: { FileIO.sameFile(target.path, $0) }) {
                let what = verb == "replay" ? "the trace itself" : "one of its shards"
                throw ShellError("\(verb): \(target.option)=\(args.option(target.option)!.0) names \(what); write the rows elsewhere", at: target.offset)
            }
            if let problem = session.storeFileProblem(target.path) {
                throw ShellError("cannot write \(target.path): \(problem)", at: target.offset)
            }
            do { try FileIO.checkWritable(target.path) } catch {
                throw ShellError("cannot write \(target.path): \(error)", at: target.offset)
            }
        }
        if targets.count == 2 && (targets[0].path == targets[1].path || FileIO.sameFile(targets[0].path, targets[1].path)) {
            throw ShellError("\(verb): csv= and plot= name the same file", at: targets[1].offset)
        }
    }

    /// The reply of a replay of one trace, named as the command gave it: a line, the table, and
    /// what was written.
    static func oneTraceReply(_ trace: ReplayedTrace, source: String, namespace: String,
                              csvPath: (String, Int)?, plotPath: (String, Int)?) throws(ShellError) -> Reply {
        if let (path, offset) = csvPath {
            do { try FileIO.writeAtomically(path, csvText(trace.rows)) } catch {
                throw ShellError("cannot write \(path): \(error)", at: offset)
            }
        }
        if let (path, offset) = plotPath {
            let svg = ReplayPlot.svg(trace.rows, title: "replay of \(source): hit ratio and requests to the server by max") ?? ""
            do { try FileIO.writeAtomically(path, svg) } catch {
                throw ShellError("cannot write \(path): \(error)", at: offset)
            }
        }
        var fields: [String: JSONValue] = [
            "file": .string(source),
            "namespace": .string(namespace),
            "trace_requests": .int(Int64(trace.requests)),
            "duration_ms": .int(trace.duration),
            "rows": .array(trace.rows.map { .object(rowObject($0)) }),
        ]
        if let (path, _) = csvPath { fields["csv"] = .string(path) }
        if let (path, _) = plotPath { fields["plot"] = .string(path) }
        var human = ["replayed \(trace.requests) \(trace.requests == 1 ? "request" : "requests") of \(source) "
                     + "over \(TimeText.formatDuration(trace.duration)) of virtual time, namespace \(namespace)"]
        human += table(trace.rows)
        if let (path, _) = csvPath { human.append("wrote \(path)") }
        if let (path, _) = plotPath { human.append("wrote \(path)") }
        return Reply(fields, human: human)
    }

    /// Most traces one replay reads (a directory or a pattern).
    static let maxTraces = 10_000

    /// The traces a directory or a pattern names, in byte order of their names, shown as the word
    /// gives them (`traces/a.txt`); nil for one file (a name that exists is a file, even with `*`).
    /// A directory gives its regular files (not those whose names start with `.`, not its
    /// subdirectories); a pattern (`*`, `?`, `[...]`, as the shell's) every file it matches, each
    /// of which must be a regular file. Checked before any trace is read.
    static func traceFiles(_ word: Word, path: String, verb: String = "replay",
                           what: String = "trace") throws(ShellError) -> [(path: String, name: String)]? {
        var st = stat()
        let exists = stat(path, &st) == 0
        let isDirectory = exists && (st.st_mode & S_IFMT) == S_IFDIR
        guard isDirectory || (!exists && word.text.contains(where: { "*?[".contains($0) })) else { return nil }
        let pattern = isDirectory ? (path.hasSuffix("/") ? path : path + "/") + "*" : path
        var matches = glob_t()
        defer { globfree(&matches) }
        let status = glob(pattern, 0, nil, &matches)
        var paths: [String] = []
        if status == 0 {
            for i in 0..<Int(matches.gl_pathc) {
                guard let p = matches.gl_pathv[i] else { continue }
                paths.append(String(cString: p))
                if paths.count > maxTraces {
                    throw ShellError("\(verb): \(word.text) names more than \(maxTraces) \(what)s; at most \(maxTraces) in one \(verb)", at: word.offset)
                }
            }
        } else if status != GLOB_NOMATCH {
            throw ShellError("\(verb): \(word.text): cannot list its files", at: word.offset)
        }
        // glob sorts by the C locale's collation; byte order whatever the locale.
        paths.sort { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        // Shown as the word gives them: the folder the path was resolved against left out.
        let prefix = path.hasSuffix(word.text) ? path.dropLast(word.text.utf8.count) : ""
        var traces: [(path: String, name: String)] = []
        for p in paths {
            var st = stat()
            let regular = stat(p, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
            let name = p.hasPrefix(prefix) ? String(p.dropFirst(prefix.count)) : p
            if isDirectory && !regular { continue }
            if !regular {
                throw ShellError("\(verb): \(word.text) matches \(name), which is not a regular file", at: word.offset)
            }
            traces.append((p, name))
        }
        if traces.isEmpty {
            throw ShellError("\(verb): \(word.text) " + (isDirectory ? "holds no \(what) (no regular file)" : "matches no file"), at: word.offset)
        }
        return traces
    }

    /// The reply of a replay of several traces: a line per trace, then one table whose rows
    /// start with the trace; in JSON, `traces` and rows with their `file`.
    static func severalReply(_ results: [ReplayedTrace], namespace: String,
                             csvPath: (String, Int)?) throws(ShellError) -> Reply {
        let named = results.flatMap { trace in trace.rows.map { (trace.name, $0) } }
        var human = results.map(replayedLine(namespace: namespace))
        human += table(named.map(\.1), traces: named.map(\.0))
        var fields: [String: JSONValue] = [
            "namespace": .string(namespace),
            "traces": .array(results.map { trace in
                .object(["file": .string(trace.name), "trace_requests": .int(Int64(trace.requests)),
                         "duration_ms": .int(trace.duration)])
            }),
            "rows": .array(named.map { name, row in
                var object = rowObject(row)
                object["file"] = .string(name)
                return .object(object)
            }),
        ]
        if let (path, offset) = csvPath {
            do { try FileIO.writeAtomically(path, csvText(named.map(\.1), traces: named.map(\.0))) } catch {
                throw ShellError("cannot write \(path): \(error)", at: offset)
            }
            fields["csv"] = .string(path)
            human.append("wrote \(path)")
        }
        return Reply(fields, human: human)
    }

    /// The line saying what was replayed of one trace of several.
    static func replayedLine(namespace: String) -> (ReplayedTrace) -> String {
        { trace in
            "replayed \(trace.requests) \(trace.requests == 1 ? "request" : "requests") of \(DiagnosticsFormatter.oneLine(trace.name)) "
                + "over \(TimeText.formatDuration(trace.duration)) of virtual time, namespace \(namespace)"
        }
    }

    /// A trace error is printed with the trace's own file and line (nil for others: the error
    /// is the command's).
    private static func report(_ error: ReplayError, session: Session) -> Outcome.Item? {
        guard let file = error.file, let line = error.line else { return nil }
        session.anyFailed = true
        if session.options.mode == .json {
            return .line(DiagnosticsFormatter.json(error.message, command: "replay", file: file, line: line, column: nil),
                         isError: false)
        }
        return .line(DiagnosticsFormatter.oneLine(error.description), isError: true)
    }

    private static func readOptions(_ args: Arguments, path: String) throws(ShellError) -> TraceOptions {
        var options = TraceOptions()
        if let (text, word) = args.option("format") {
            guard let format = TraceFormat(rawValue: String(text)) else {
                throw ShellError("replay: format=\(text): use keys, timed, csv, oracle or har", at: word.offset)
            }
            options.format = format
        } else {
            // A compressed trace's format is that of its name without .gz or .zst (t.csv.zst is CSV).
            let plain = path.hasSuffix(".gz") ? String(path.dropLast(3))
                : path.hasSuffix(".zst") ? String(path.dropLast(4)) : path
            if plain.hasSuffix(".csv") {
                options.format = .csv
            } else if plain.hasSuffix(".oracleGeneral") || plain.hasSuffix(".bin") {
                options.format = .oracle
            }
        }
        if let (text, word) = args.option("time-unit") {
            guard let unit = TraceTimeUnit(rawValue: String(text)) else {
                throw ShellError("replay: time-unit=\(text): use s, ms or us", at: word.offset)
            }
            options.timeUnit = unit
        }
        if let (text, word) = args.option("step") {
            options.step = try Arguments.duration(text, at: word.offset + 5)
        }
        // An option the format has no use for is refused rather than ignored (a keys trace with
        // time-unit=ms was replayed as if the unit meant something).
        if options.format == .keys, let (_, word) = args.option("time-unit") {
            throw ShellError("replay: time-unit= is for a trace with times; a format=keys trace has none (the clock moves step= per request)", at: word.offset)
        }
        if options.format == .timed || options.format == .oracle, let (_, word) = args.option("step") {
            throw ShellError("replay: step= is for a trace without times; a format=\(options.format.rawValue) trace has them", at: word.offset)
        }
        for name in ["key", "time", "header"] {
            guard let (text, word) = args.option(name) else { continue }
            guard options.format == .csv else {
                let what = name == "header" ? "header= is for a CSV trace" : "\(name)= names a CSV column"
                throw ShellError("replay: \(what); this trace is format=\(options.format.rawValue)", at: word.offset)
            }
            if name == "header" {
                guard text == "yes" || text == "no" else { throw ShellError("replay: header=\(text): use yes or no", at: word.offset) }
                options.header = text == "yes"
                continue
            }
            guard !text.isEmpty else { throw ShellError("replay: \(name)= needs a column name or number", at: word.offset) }
            if let index = TraceOptions.columnNumber(String(text)), index < 0 {
                throw ShellError("replay: \(name)=\(text): columns are numbered from 1", at: word.offset)
            }
            if name == "key" { options.keyColumn = String(text) } else { options.timeColumn = String(text) }
        }
        if !options.header {
            // Without a header, columns have numbers only.
            for name in ["key", "time"] {
                let column = name == "key" ? options.keyColumn : options.timeColumn
                guard let column, TraceOptions.columnNumber(column) == nil else { continue }
                throw ShellError("replay: header=no: name the \(name) column by its number (\(name)=2)",
                                 at: args.option(name)?.1.offset ?? args.option("header")!.1.offset)
            }
        }
        return options
    }


    /// A comma list option's values, each parsed by `parse`; `fallback` when absent.
    static func list<T>(_ args: Arguments, _ name: String, default fallback: [T],
                                _ parse: (Substring, Int) throws(ShellError) -> T) throws(ShellError) -> [T] {
        guard args.option(name) != nil else { return fallback }
        var values: [T] = []
        try eachItem(args, name) { item, offset throws(ShellError) in values.append(try parse(item, offset)) }
        return values
    }

    /// Calls `body` with each item of a comma list option and its offset; nothing when absent.
    private static func eachItem(_ args: Arguments, _ name: String,
                                 _ body: (Substring, Int) throws(ShellError) -> Void) throws(ShellError) {
        guard let (text, word) = args.option(name) else { return }
        var offset = word.offset + name.utf8.count + 1
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard !item.isEmpty else { throw ShellError("replay: \(name)= has an empty item", at: offset) }
            try body(item, offset)
            offset += item.utf8.count + 1
        }
    }

    /// The sizes of a curve from `low` to `high`: ten steps per decade (×1.26 each), rounded,
    /// without repeats, `high` last.
    static func curve(from low: Int, to high: Int) -> [Int?] {
        var sizes: [Int?] = []
        var x = Double(low)
        // Compared as doubles: a size past Int.max (`max=1..9223372036854775807`) is never
        // converted, which would trap.
        while x.rounded() < Double(high) && sizes.count < maxCombinations {
            let n = Int(x.rounded())
            if sizes.last != .some(n) { sizes.append(n) }
            x *= 1.2589254117941673  // 10^(1/10)
        }
        sizes.append(high)
        return sizes
    }

    static func outputPath(_ args: Arguments, _ name: String, session: Session, source: SourceFile) throws(ShellError) -> (String, Int)? {
        guard let (text, word) = args.option(name) else { return nil }
        guard !text.isEmpty else { throw ShellError("replay: \(name)= needs a file name", at: word.offset) }
        let path = session.resolvePath(String(text), relativeTo: source)
        try session.touchFile("write", path, at: word.offset)
        return (path, word.offset)
    }

    // MARK: Rendering

    static func rowObject(_ row: ReplayRow) -> [String: JSONValue] {
        let c = row.configuration, n = row.counters
        return [
            "policy": .string(c.policy.rawValue),
            "max": c.max.map { .int(Int64($0)) } ?? .null,
            "ttl_ms": c.ttl.map(JSONValue.int) ?? .null,
            "stale_ms": c.stale.map(JSONValue.int) ?? .null,
            "requests": .int(Int64(n.requests)),
            "hits": .int(Int64(n.hits)),
            "stale_hits": .int(Int64(n.staleHits)),
            "misses": .int(Int64(n.misses)),
            "evictions": .int(Int64(n.evictions)),
            "expirations": .int(Int64(n.expirations)),
            "hit_ratio": .double(n.hitRatio),
        ]
    }

    /// A ratio with four decimals (0.5312).
    static func ratio(_ r: Double) -> String {
        let n = Int((r * 10_000).rounded())
        let fraction = String(n % 10_000)
        return "\(n / 10_000)." + String(repeating: "0", count: 4 - fraction.count) + fraction
    }

    private static func cells(_ row: ReplayRow) -> [String] {
        let c = row.configuration, n = row.counters
        var cells: [String] = [c.policy.rawValue]
        cells.append(c.max.map { String($0) } ?? "none")
        cells.append(c.ttl.map { TimeText.formatDuration($0) } ?? "none")
        cells.append(c.stale.map { TimeText.formatDuration($0) } ?? "none")
        for value in [n.requests, n.hits, n.staleHits, n.misses, n.evictions, n.expirations] { cells.append(String(value)) }
        cells.append(ratio(n.hitRatio))
        return cells
    }

    /// The progress line of a long replay: how far into the trace's bytes, and the requests so far.
    static func progressText(_ name: String, requests: Int, position: Int64, size: Int64) -> String {
        let percent = size > 0 ? min(100, position * 100 / size) : 100
        return "replay: \(percent)% of \(Render.visible(name)), \(requests) requests (Ctrl-C stops it)"
    }

    /// The rows as an aligned table: text left, numbers right.
    /// With `traces`, each row's trace first (a replay of several).
    static func table(_ rows: [ReplayRow], traces: [String]? = nil) -> [String] {
        var header = ["policy", "max", "ttl", "stale", "requests", "hits", "stale_hits", "misses", "evictions", "expirations", "hit_ratio"]
        var body = rows.map(cells)
        let textColumns = traces == nil ? 1 : 2
        if let traces {
            header.insert("trace", at: 0)
            body = zip(traces, body).map { [DiagnosticsFormatter.oneLine($0)] + $1 }
        }
        var widths = header.map(\.count)
        for cells in body { for (i, cell) in cells.enumerated() { widths[i] = max(widths[i], cell.count) } }
        func line(_ cells: [String]) -> String {
            var out = ""
            for (i, cell) in cells.enumerated() {
                let pad = String(repeating: " ", count: widths[i] - cell.count)
                if i > 0 { out += "  " }
                out += i < textColumns ? cell + pad : pad + cell
            }
            return out
        }
        return [line(header)] + body.map(line)
    }

    /// Rows of cells as an aligned table under `header`: the `numeric` columns right-aligned, the
    /// others left (the last column is not padded).
    static func alignedTable(header: [String], rows: [[String]], numeric: Set<Int>) -> [String] {
        var widths = header.map(\.count)
        for cells in rows { for (i, cell) in cells.enumerated() { widths[i] = max(widths[i], cell.count) } }
        func line(_ cells: [String]) -> String {
            var out = ""
            for (i, cell) in cells.enumerated() {
                let pad = String(repeating: " ", count: widths[i] - cell.count)
                if i > 0 { out += "  " }
                out += numeric.contains(i) ? pad + cell : (i == cells.count - 1 ? cell : cell + pad)
            }
            return out
        }
        return [line(header)] + rows.map(line)
    }

    /// A CSV field: quoted, its quotes doubled, when it holds a comma, a quote or a line break.
    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        var out = "\""
        for character in text { out += character == "\"" ? "\"\"" : String(character) }
        return out + "\""
    }

    /// The rows as CSV, with a header of the JSON field names; `none` is an empty field.
    /// With `traces`, a first column `file`, each row's trace (quoted as CSV quotes).
    static func csvText(_ rows: [ReplayRow], traces: [String]? = nil) -> String {
        var out = (traces == nil ? "" : "file,") + rowFields.joined(separator: ",") + "\n"
        for (i, row) in rows.enumerated() {
            let c = row.configuration, n = row.counters
            var cells: [String] = traces.map { [csvField($0[i])] } ?? []
            cells.append(c.policy.rawValue)
            cells.append(c.max.map { String($0) } ?? "")
            cells.append(c.ttl.map { String($0) } ?? "")
            cells.append(c.stale.map { String($0) } ?? "")
            for value in [n.requests, n.hits, n.staleHits, n.misses, n.evictions, n.expirations] { cells.append(String(value)) }
            cells.append(ratio(n.hitRatio))
            out += cells.joined(separator: ",") + "\n"
        }
        return out
    }
}
