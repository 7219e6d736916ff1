import CacheCore

/// What a command answers: its JSON fields (SPEC §4) and, where the generic `name: value`
/// layout does not suit it, its own human lines.
struct Reply {
    var fields: [String: JSONValue]
    /// Human lines; nil renders `fields` as aligned `name: value` lines in `order`.
    var human: [String]?
    /// Field order for the generic human layout; fields not named follow, sorted.
    var order: [String] = []

    init(_ fields: [String: JSONValue], order: [String] = [], human: [String]? = nil) {
        self.fields = fields
        self.order = order
        self.human = human
    }

    /// `ok: true` and what changed.
    static func ok(_ extra: [String: JSONValue] = [:], human: [String]? = nil) -> Reply {
        var fields = extra
        fields["ok"] = .bool(true)
        return Reply(fields, human: human)
    }

    /// The changed keys, for the commands SPEC §4 gives a `keys` field; `ok` adds `ok: true`,
    /// for the commands it does not name (`mutate`, `event`).
    static func keys(_ keys: [String], ok: Bool = false) -> Reply {
        var fields: [String: JSONValue] = ["keys": .array(keys.map(JSONValue.string))]
        if ok { fields["ok"] = .bool(true) }
        return Reply(fields, human: [keys.isEmpty ? "keys: (none)" : "keys: " + keys.joined(separator: " ")])
    }
}

extension Session {
    /// Prints a command's reply in the session's output mode.
    func emit(_ reply: Reply, command: String) {
        if options.mode == .json {
            var fields = reply.fields
            fields["command"] = .string(command)
            write(JSONValue.object(fields).compactText)
            return
        }
        if let human = reply.human {
            for line in human { write(line) }
        } else {
            for line in Render.fieldLines(reply.fields.filter { $0.key != "ok" }, order: reply.order, colour: options.colour) {
                write(line)
            }
        }
    }

    func noteHistory(_ command: String, outputFrom start: Int) {
        var text = ""
        for index in start..<output.count {
            text += interactiveForms[index] ?? output[index].text
        }
        interactiveForms.removeAll()
        history.append((command, text))
        recording?.append(command: command, output: text)
    }
}

/// Human output: aligned `name: value` lines and tables, states coloured on a terminal.
enum Render {
    static func stateText(_ state: String, colour: Bool) -> String {
        guard colour else { return state }
        let code: String
        switch state {
        case "fresh": code = "32"
        case "stale": code = "33"
        case "expired": code = "31"
        default: code = "2"
        }
        return "\u{1B}[\(code)m\(state)\u{1B}[0m"
    }

    /// One value as a human reads it: strings bare, everything else as compact JSON.
    static func text(_ value: JSONValue) -> String {
        if case .string(let s) = value { return s }
        return value.compactText
    }

    /// `name: value` lines, names padded to one width (independent of the terminal).
    static func fieldLines(_ fields: [String: JSONValue], order: [String], colour: Bool) -> [String] {
        var names = order.filter { fields[$0] != nil }
        names += fields.keys.filter { !order.contains($0) }.sorted()
        let width = names.map(\.count).max() ?? 0
        return names.map { name in
            let value = fields[name]!
            var shown = text(value)
            if name == "state", case .string(let s) = value { shown = stateText(s, colour: colour) }
            return name + ":" + String(repeating: " ", count: width - name.count + 1) + shown
        }
    }

    /// An aligned table: a header row and one row per item, columns padded to their widest cell.
    /// The last column is not padded.
    static func table(_ columns: [String], _ rows: [[String]], colourColumn: Int? = nil, colour: Bool = false) -> [String] {
        var widths = columns.map(\.count)
        for row in rows {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) }
        }
        func line(_ cells: [String], colourize: Bool) -> String {
            var out = ""
            for (i, cell) in cells.enumerated() {
                let shown = colourize && i == colourColumn ? stateText(cell, colour: colour) : cell
                if i == cells.count - 1 {
                    out += shown
                } else {
                    out += shown + String(repeating: " ", count: widths[i] - cell.count + 2)
                }
            }
            return out
        }
        return [line(columns, colourize: false)] + rows.map { line($0, colourize: true) }
    }

    static func eventLine(_ event: CacheEvent, clockStart: Int64, colour: Bool) -> String {
        let time = TimeText.iso8601(ms: event.at)
        if event.cause == .pushed {
            return "* \(time) pushed \(event.key)"
        }
        var line = "* \(time) \(event.cause.rawValue) \(event.key) \(stateText(event.state.rawValue, colour: colour))"
        if let value = event.value { line += " " + value.compactText }
        line += " (\(event.source.rawValue))"
        return line
    }
}
