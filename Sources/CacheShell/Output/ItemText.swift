import CacheCore

/// The text of the items a command prints beside its reply (SPEC §4): observer events,
/// validation answers nobody waited for, and the commands `at` ran.
enum ItemText {
    /// An observer event's line (SPEC §4), without its line feed.
    static func eventLine(_ event: CacheEvent, clockStart: Int64, mode: OutputMode, colour: Bool) -> String {
        guard mode == .json else { return Render.eventLine(event, clockStart: clockStart, colour: colour) }
        return JSONValue.object(eventFields(event, clockStart: clockStart)).compactText
    }

    /// The fields of an observer event's JSON line.
    static func eventFields(_ event: CacheEvent, clockStart: Int64) -> [String: JSONValue] {
        var fields: [String: JSONValue] = [
            "event": .string(event.cause.rawValue),
            "key": .string(event.key),
            "at": .string(TimeText.iso8601(ms: event.at)),
            "at_ms": .int(event.at - clockStart),
            "state": .string(event.state.rawValue),
            "value": event.value ?? .null,
            "source": .string(event.source.rawValue),
        ]
        if event.cause == .pushed {
            fields["type"] = .string(event.key)
            fields["key"] = .null
            fields["state"] = .null
        }
        return fields
    }

    /// The lines of a validation answer nobody waited for, which arrived at `at`.
    static func validatedLines(_ result: ValidationResult, at: Int64, mode: OutputMode) -> [String] {
        var fields = RealtimeCommands.validationFields(result)
        fields["event"] = .string("validated")
        fields["at"] = .string(TimeText.iso8601(ms: at))
        if mode == .json { return [JSONValue.object(fields).compactText] }
        var lines = ["validated at \(TimeText.iso8601(ms: at)):"]
        for line in Render.fieldLines(fields.filter { $0.key != "event" && $0.key != "at" }, order: ["request", "response", "error", "keys"], colour: false) {
            lines.append("  " + line)
        }
        return lines
    }

    /// What a command `at` scheduled prints when it runs at `time`: an `"event": "at"` object, or
    /// `at TIME: COMMAND` and its reply's lines indented (`ok` for none). Each line ends in a line feed.
    static func scheduled(_ reply: Reply, name: String, text: String, time: String, mode: OutputMode, colour: Bool,
                          width: Int = Render.width) -> String {
        if mode == .json {
            var fields = reply.fields
            fields["event"] = .string("at")
            fields["command"] = .string(name)
            fields["at"] = .string(time)
            return JSONValue.object(fields).compactText + "\n"
        }
        var lines = reply.humanLines(colour: colour, width: width)
        if lines.isEmpty { lines = ["ok"] }
        return "at \(time): \(text)\n" + lines.map { "  " + $0 + "\n" }.joined()
    }
}
