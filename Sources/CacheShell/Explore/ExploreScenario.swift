import CacheCore

/// A scenario `explore` runs (SPEC §3.1): setup commands in order, one block of steps that may
/// interleave (`concurrent` ... `end`, sections separated by `and`), then `expect` lines checked
/// once everything has settled. A step is an ordinary command; a `get` or `mutate KEY` step may
/// say the latency range of the request it sends (`latency=10ms..2s`) and the answers it may
/// get (`answer=ok,fail,lost`), which the search chooses among.
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
        /// The key of the request the step sends (its `get` or `mutate` key), when it has `latency=`.
        public var key: String?
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
    }

    /// The scenario's file name, as given.
    public var name: String
    public var setup: [Line]
    public var steps: [Step]
    public var sectionCount: Int
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
            let whole = String(decoding: bytes[command.offset..<command.end], as: UTF8.self)
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
            case (.checks, "expect"):
                expects.append(Line(text: whole, line: line))
            case (.checks, _):
                throw Problem(line: line, message: "explore: only expect lines may follow end (found \(first))")
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

    /// A step: its command with `latency=` and `answer=` taken off (on `get` and `mutate KEY`).
    private static func step(_ command: RawCommand, whole: String, line: Int, section: Int) throws(Problem) -> Step {
        let words = command.words
        let name = words[0].text
        let sendsRequest = name == "get" || (name == "mutate" && words.count > 1 && words[1].text != "entity")
        var latency: ClosedRange<Int64>?
        var answers: [Answer] = [.ok]
        var answerGiven = false
        var cut: [Range<Int>] = []
        for word in words.dropFirst() where word.kind == .bare {
            let text = word.text
            if text.hasPrefix("latency=") || text.hasPrefix("answer=") {
                guard sendsRequest else {
                    throw Problem(line: line, message: "explore: \(text.prefix { $0 != "=" })= goes on a get or mutate KEY step (the request it sends), not on \(name)")
                }
            } else { continue }
            if text.hasPrefix("latency=") {
                guard latency == nil else { throw Problem(line: line, message: "explore: latency= given twice") }
                latency = try range(text.dropFirst("latency=".count), line: line)
            } else {
                guard !answerGiven else { throw Problem(line: line, message: "explore: answer= given twice") }
                answerGiven = true
                var list: [Answer] = []
                for item in text.dropFirst("answer=".count).split(separator: ",", omittingEmptySubsequences: false) {
                    guard let answer = Answer(rawValue: String(item)) else {
                        throw Problem(line: line, message: "explore: answer=\(text.dropFirst("answer=".count)): a list of ok, fail and lost (answer=ok,lost)")
                    }
                    if !list.contains(answer) { list.append(answer) }
                }
                answers = list
            }
            cut.append(word.offset - command.offset..<word.end - command.offset)
        }
        if answers != [.ok] && latency == nil {
            throw Problem(line: line, message: "explore: answer= needs latency= (the range the answer arrives in, latency=10ms..1s)")
        }
        if name == "get" {
            let flags = words.map(\.text)
            if !flags.contains("--async") && !flags.contains("--nowait") {
                throw Problem(line: line, message: "explore: a get step waits for its answer, which would fix the order; write get KEY --async (or --nowait)")
            }
        }
        // The command without the words cut, each with the blanks before it.
        var utf8 = Array(whole.utf8)
        for range in cut.reversed() {
            var start = range.lowerBound
            while start > 0 && (utf8[start - 1] == UInt8(ascii: " ") || utf8[start - 1] == UInt8(ascii: "\t")) { start -= 1 }
            utf8.removeSubrange(start..<range.upperBound)
        }
        let text = String(decoding: utf8, as: UTF8.self)
        let key = latency == nil ? nil : words[1].text
        var step = Step(command: Line(text: text, line: line), key: key, latency: latency, answers: answers, section: section)
        step.verb = name
        step.argument = words.count > 1 ? words[1].text : nil
        if name == "mutate" && words.count > 2 && words[1].text != "entity" { step.patch = words[2].text }
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
