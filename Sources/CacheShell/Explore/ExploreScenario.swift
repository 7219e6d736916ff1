import CacheCore

/// A scenario `explore` runs (SPEC §3.1): setup commands in order, one block of steps that may
/// interleave (`concurrent` ... `end`, sections separated by `and`), then `expect` lines checked
/// once everything has settled. A step is an ordinary command; a step that sends a request (`get`,
/// `mutate KEY`, `pages KEY --next`, `request METHOD KEY`, or any step with `sends=KEY`: a focus's
/// refetch, a push's refresh) may say the latency range of that request (`latency=10ms..2s`) and
/// the answers it may get (`answer=ok,fail,lost`), which the search chooses among; any step may
/// say the client it runs in (`client=NAME`).
public struct ExploreScenario: Sendable {
    /// A command as written, without the options explore takes off it, and its line (from 1).
    public struct Line: Sendable, Equatable {
        public var text: String
        public var line: Int
    }

    /// How the answer to a step's request may come back.
    public enum Answer: String, Sendable, CaseIterable {
        /// Answered (from the server's data as it is when the request arrives).
        case ok
        /// Failed by the server (`server next KEY --fail`).
        case fail
        /// Applied, then the answer lost on the way (`server next KEY --lost-answer`).
        case lost
    }

    /// One step of the block.
    public struct Step: Sendable, Equatable {
        public var command: Line
        /// The key of the request the step sends (its `get`, `mutate` or `request` key, or `sends=`),
        /// when it has `latency=`; nil for `pages KEY --next`, whose page is known when it is issued.
        public var key: String?
        /// `pages KEY --next` with `latency=`: the list whose next page the request is for.
        public var nextPageOf: String?
        /// The client the step runs in (`client=NAME`); nil: the client the setup ended in.
        public var client: String?
        /// The request's latency range in ms, inclusive; nil: the step's requests are not
        /// scheduled events (they take the server's latency).
        public var latency: ClosedRange<Int64>?
        /// The answers tried, the first the written one.
        public var answers: [Answer]
        /// The section (from 0) the step belongs to.
        public var section: Int
        /// The command's name and its first argument as written (`mutate`, `todos:list`), for the
        /// built-in properties; the PATCH of a `mutate KEY PATCH`.
        public var verb: String = ""
        public var argument: String?
        public var patch: String?
        /// What a `put KEY VALUE` or `event patch KEY PATCH` step writes locally: the key, and the
        /// value or the patch (for *no invented value*).
        public var writeKey: String?
        public var writeValue: String?
        public var eventPatch: String?
    }

    /// The scenario's file name, as given.
    public var name: String
    public var setup: [Line]
    public var steps: [Step]
    public var sectionCount: Int
    /// The lines after `end`, run in order once everything has settled: the `expect` lines check,
    /// the other commands lead up to them (`client tab3`, `hydrate`).
    public var expects: [Line]
    /// The line of `concurrent`.
    public var blockLine: Int
    /// The scenario's size in bytes (under `--safe`, each schedule's budget of scheduled work).
    public var bytes: Int

    /// Most steps in a block (SPEC §7.1).
    public static let maxSteps = 32

    /// A problem with the scenario: a line and a message, reported `FILE:LINE: error: ...`.
    public struct Problem: Error, Sendable, Equatable {
        public var line: Int
        public var message: String
    }

    /// Reads a scenario; throws the first problem.
    public init(name: String, text: String) throws(Problem) {
        self.name = name
        let source = SourceFile(name: name, text: text)
        var lexer = Lexer(source, semicolonSeparates: false)
        let bytes = Array(text.utf8)
        enum Phase { case setup, block, checks }
        var phase = Phase.setup
        var setup: [Line] = [], steps: [Step] = [], expects: [Line] = []
        var section = 0
        var blockLine = 0
        while let next = lexer.next() {
            let command: RawCommand
            switch next {
            case .failure(let diagnostic):
                throw Problem(line: source.location(ofOffset: diagnostic.offset).line, message: diagnostic.message)
            case .success(let raw): command = raw
            }
            let line = source.location(ofOffset: command.offset).line
            let first = command.words[0].text
            let whole = String(decoding: SourceScan.readAlone(bytes[command.offset..<command.end]), as: UTF8.self)
            switch (phase, first) {
            case (.setup, "concurrent"):
                guard command.words.count == 1 else { throw Problem(line: line, message: "explore: concurrent takes nothing after it") }
                phase = .block
                blockLine = line
            case (.block, "and"):
                guard command.words.count == 1 else { throw Problem(line: line, message: "explore: and takes nothing after it") }
                guard steps.contains(where: { $0.section == section }) else {
                    throw Problem(line: line, message: "explore: and ends a section with no step (write the steps between concurrent, and, end)")
                }
                section += 1
            case (.block, "end"):
                guard command.words.count == 1 else { throw Problem(line: line, message: "explore: end takes nothing after it") }
                guard steps.contains(where: { $0.section == section }) else {
                    throw Problem(line: line, message: "explore: end closes a section with no step")
                }
                phase = .checks
            case (.block, "concurrent"):
                throw Problem(line: line, message: "explore: concurrent inside a block (close the first with end; a scenario has one block)")
            case (.block, "advance"):
                throw Problem(line: line, message: "explore: advance as a step would move the clock under the schedule, which sets the times; put it in the setup, or give the step's answer a latency= range")
            case (.block, _):
                guard steps.count < Self.maxSteps else {
                    throw Problem(line: line, message: "explore: more than \(Self.maxSteps) steps in a block; at most \(Self.maxSteps)")
                }
                steps.append(try Self.step(command, whole: whole, line: line, section: section))
            case (.checks, "concurrent"), (.checks, "and"), (.checks, "end"):
                throw Problem(line: line, message: "explore: \(first) after end (a scenario has one block)")
            case (.checks, _):
                // Run in order once everything has settled: expect lines check, the others lead up
                // to them (client tab3, hydrate).
                expects.append(Line(text: whole, line: line))
            case (.setup, "and"), (.setup, "end"):
                throw Problem(line: line, message: "explore: \(first) outside a block (open one with concurrent)")
            case (.setup, _):
                setup.append(Line(text: whole, line: line))
            }
        }
        switch phase {
        case .setup: throw Problem(line: max(1, source.location(ofOffset: bytes.count).line),
                                   message: "explore: no concurrent block: write the steps that may interleave between concurrent and end")
        case .block: throw Problem(line: blockLine, message: "explore: concurrent is never closed with end")
        case .checks: break
        }
        self.setup = setup
        self.steps = steps
        self.sectionCount = section + 1
        self.expects = expects
        self.blockLine = blockLine
        self.bytes = bytes.count
    }

    /// The options explore takes off a step before it runs (SPEC §3.1).
    static let stepOptions = ["latency", "answer", "sends", "client"]

    /// A step: its command with `latency=`, `answer=`, `sends=` and `client=` taken off.
    private static func step(_ command: RawCommand, whole: String, line: Int, section: Int) throws(Problem) -> Step {
        let words = command.words
        let name = words[0].text
        let flags = Set(words.dropFirst().map(\.text))
        var latency: ClosedRange<Int64>?
        var answers: [Answer] = [.ok]
        var answerGiven = false
        var sends: String?
        var client: String?
        var cut: [Range<Int>] = []
        for word in words.dropFirst() where word.kind == .bare {
            let text = word.text
            guard let option = stepOptions.first(where: { text.hasPrefix($0 + "=") }) else { continue }
            let value = String(text.dropFirst(option.count + 1))
            switch option {
            case "latency":
                guard latency == nil else { throw Problem(line: line, message: "explore: latency= given twice") }
                latency = try range(Substring(value), line: line)
            case "answer":
                guard !answerGiven else { throw Problem(line: line, message: "explore: answer= given twice") }
                answerGiven = true
                var list: [Answer] = []
                for item in value.split(separator: ",", omittingEmptySubsequences: false) {
                    guard let answer = Answer(rawValue: String(item)) else {
                        throw Problem(line: line, message: "explore: answer=\(value): a list of ok, fail and lost (answer=ok,lost)")
                    }
                    if !list.contains(answer) { list.append(answer) }
                }
                answers = list
            case "sends":
                guard sends == nil else { throw Problem(line: line, message: "explore: sends= given twice") }
                guard !value.isEmpty, !value.contains("="), value.utf8.count <= 1_024 else {
                    throw Problem(line: line, message: "explore: sends=\(value): name the key of the request the step sends (sends=todos:list)")
                }
                sends = value
            default:
                guard client == nil else { throw Problem(line: line, message: "explore: client= given twice") }
                if let problem = ClientTable.nameProblem(value) { throw Problem(line: line, message: "explore: client=\(value): \(problem)") }
                client = value
            }
            cut.append(word.offset - command.offset..<word.end - command.offset)
        }
        // The request a step sends, as far as its words say: its key, or the list whose next page.
        var key: String?
        var nextPageOf: String?
        switch name {
        case "get" where words.count > 1: key = words[1].text
        case "mutate" where words.count > 1 && words[1].text != "entity": key = words[1].text
        case "request" where words.count > 2: key = words[2].text
        case "pages" where words.count > 1 && flags.contains("--next"): nextPageOf = words[1].text
        default: break
        }
        if let sends {
            key = sends
            nextPageOf = nil
        }
        if latency != nil && key == nil && nextPageOf == nil {
            throw Problem(line: line, message: "explore: latency= goes on a step that sends a request: get, mutate KEY, pages KEY --next, "
                          + "request METHOD KEY, or any step with sends=KEY naming the key it sends for (focus sends=todos:list)")
        }
        if answerGiven && latency == nil {
            throw Problem(line: line, message: "explore: answer= needs latency= (the range the answer arrives in, latency=10ms..1s)")
        }
        if sends != nil && latency == nil {
            throw Problem(line: line, message: "explore: sends= needs latency= (the range its answer arrives in, latency=10ms..1s)")
        }
        if name == "get" && !flags.contains("--async") && !flags.contains("--nowait") {
            throw Problem(line: line, message: "explore: a get step waits for its answer, which would fix the order; write get KEY --async (or --nowait)")
        }
        if latency != nil && (name == "pages" || name == "request") && !flags.contains("--nowait") {
            throw Problem(line: line, message: "explore: a \(name) step with latency= waits for its answer, which would fix the order; add --nowait")
        }
        // The command without the words cut, each with the blanks before it.
        var utf8 = Array(whole.utf8)
        for range in cut.reversed() {
            var start = range.lowerBound
            while start > 0 && (utf8[start - 1] == UInt8(ascii: " ") || utf8[start - 1] == UInt8(ascii: "\t")) { start -= 1 }
            utf8.removeSubrange(start..<range.upperBound)
        }
        let text = String(decoding: utf8, as: UTF8.self)
        var step = Step(command: Line(text: text, line: line), key: latency == nil ? nil : key, latency: latency, answers: answers, section: section)
        step.nextPageOf = latency == nil ? nil : nextPageOf
        step.client = client
        step.verb = name
        step.argument = words.count > 1 ? words[1].text : nil
        if name == "mutate" && words.count > 2 && words[1].text != "entity" { step.patch = words[2].text }
        if name == "put" && words.count > 2 {
            step.writeKey = words[1].text
            step.writeValue = words[2].text
        }
        if name == "event" && words.count > 3 && words[1].text == "patch" {
            step.writeKey = words[2].text
            step.eventPatch = words[3].text
        }
        return step
    }

    /// `LO..HI` or one duration `D` (exactly D).
    private static func range(_ text: Substring, line: Int) throws(Problem) -> ClosedRange<Int64> {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        func duration(_ part: Substring) throws(Problem) -> Int64 {
            guard let ms = TimeText.parseDuration(part) else {
                throw Problem(line: line, message: "explore: latency=\(text): \(TimeText.durationError(part)) (write latency=LO..HI, like latency=10ms..2s)")
            }
            return ms
        }
        let low: Int64, high: Int64
        if parts.count == 1 {
            low = try duration(parts[0])
            high = low
        } else {
            guard parts.count == 3, parts[1].isEmpty else {
                throw Problem(line: line, message: "explore: latency=\(text): write latency=LO..HI, like latency=10ms..2s")
            }
            low = try duration(parts[0])
            high = try duration(parts[2])
        }
        guard low <= high else { throw Problem(line: line, message: "explore: latency=\(text): the low end is above the high end") }
        guard high <= Self.maxLatency else {
            throw Problem(line: line, message: "explore: latency=\(text): at most \(TimeText.formatDuration(Self.maxLatency))")
        }
        return low...high
    }

    /// The longest latency a step may give (SPEC §7.1): a day.
    public static let maxLatency: Int64 = 86_400_000
}
