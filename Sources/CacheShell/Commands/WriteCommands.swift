import CacheCore

/// `put`, `expire`, `invalidate`, `evict`, `clear`, `memory-warning`: local writes (B1, B6, B9, B13).
enum WriteCommands {
    private static let putOptions: Set<String> = ["tags"]

    static func put(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, options: putOptions, leading: 2)
        try args.expect(2...2, usage: "KEY VALUE [tags=a,b]")
        let key = try args.key(0)
        let value = try args.value(1)
        var tags: [String] = []
        if let (text, word) = args.option("tags") {
            tags = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            if tags.contains(where: \.isEmpty) { throw ShellError("put: empty tag in tags=\(text)", at: word.offset) }
            var seen = Set<String>()
            tags = tags.filter { seen.insert($0).inserted }
        }
        return .keys(cache.put(key, value, tags: tags))
    }

    static func expire(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source, options: ["in"])
        try args.expect(1...1, usage: "KEY [in=D]")
        let key = try args.key(0)
        var delay: Int64?
        if let (text, word) = args.option("in") {
            delay = try Arguments.duration(text, at: word.offset + 3)
        }
        return .keys(cache.expire(key, in: delay))
    }

    static func invalidate(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source)
        try args.expect(1...1, usage: "KEY|NS:*|tag:T")
        return .keys(cache.invalidate(try args.target(0)))
    }

    static func evict(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source)
        try args.expect(1...1, usage: "KEY")
        return .keys(cache.evict(try args.key(0)))
    }

    static func clear(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source)
        try args.expect(0...1, usage: "[NS]")
        let namespace = try args.positional.first.map { word throws(ShellError) in try Arguments.namespace(word) }
        return .keys(cache.clear(namespace: namespace))
    }

    static func memoryWarning(_ session: Session, _ cache: isolated Cache, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply {
        let args = try Arguments(command, source)
        try args.expect(0...0, usage: "no arguments")
        return .keys(cache.memoryWarning())
    }
}
