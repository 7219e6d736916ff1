@testable import CacheShell
import CacheCore
import Testing

/// One declaration of a core operation: every `CacheCall` kind reads back from a recording's
/// file as it was written, and is written in a transcript by exactly one command, the one that
/// declares it (`CommandSpec.writes`).
@Suite struct CacheCallTests {
    /// Calls of `kind`, with arguments that give each of its fields. The switch is exhaustive: a
    /// kind added to `CacheCall` does not compile here until it has its samples, which the tests
    /// below then write, read back and transcribe.
    static func samples(_ kind: CacheCall.Kind) -> [CacheCall] {
        switch kind {
        case .get: [.get(key: "feed:home", force: true, mode: .nowait), .get(key: "a", force: false, mode: .async),
                    .get(key: "b", force: false, mode: .blocking)]
        case .mget: [.mget(keys: ["a", "feed:home"]), .mget(keys: ["a"], nowait: true)]
        case .pages: [.pages(key: "feed:timeline", refetch: false), .pages(key: "a", refetch: true, nowait: true),
                      .pages(key: "feed:timeline", refetch: false, nowait: true, next: true)]
        case .peek: [.peek(key: "feed:home")]
        case .touch: [.touch(key: "feed:home")]
        case .keys: [.keys(pattern: nil), .keys(pattern: "feed:*")]
        case .put: [.put(key: "feed:home", value: ["id": 1, "likes": [1, 2]], tags: ["home", "x"]), .put(key: "a", value: "s", tags: [])]
        case .expire: [.expire(key: "feed:home", in: nil), .expire(key: "a", in: 30_000)]
        case .invalidate: [.invalidate(.key("feed:home")), .invalidate(.namespace("feed")), .invalidate(.tag("home"))]
        case .evict: [.evict(key: "feed:home")]
        case .clear: [.clear(namespace: nil), .clear(namespace: "feed")]
        case .memoryWarning: [.memoryWarning]
        case .mutate: [.mutate(key: "feed:home", patch: ["likes": ["$inc": 1]]),
                       .mutate(key: "a", patch: ["n": 1], options: MutationOptions(pessimistic: true, refetch: true))]
        case .mutateEntity: [.mutateEntity(id: "1", patch: ["likes": 2]),
                             .mutateEntity(id: "2", patch: ["n": 1], options: MutationOptions(pessimistic: false, refetch: true))]
        case .event: [.event(key: "feed:home", patch: ["n": 1], own: false), .event(key: "a", patch: ["n": 2], own: true),
                      .event(key: "doc:1", patch: ["n": 3], own: false, version: 7)]
        case .eventEntity: [.eventEntity(id: "1", patch: ["likes": 3], own: true)]
        case .push: [.push(type: "friend-blocked", arguments: ["user": "42"]), .push(type: "reset", arguments: [:])]
        case .validate: [.validate(items: true, wait: true), .validate(items: false, wait: false)]
        case .originOnline: [.originOnline]
        case .defineNamespace: [.defineNamespace(name: "feed", change: PolicyChange(ttl: 1_000, stale: .some(nil), max: .some(3),
                                                                                    purgeable: true, eviction: .lfu)),
                                .defineNamespace(name: "page", change: PolicyChange(staleIfError: .some(5_000), timeout: .some(nil),
                                                                                    retry: 2, backoff: 500, naive: [.serveExpired])),
                                .defineNamespace(name: "clock", change: PolicyChange(dedupe: .some(200))),
                                .defineNamespace(name: "clock", change: PolicyChange(dedupe: .some(nil))),
                                .defineNamespace(name: "api", change: PolicyChange(http: HTTPNamespace(origin: "https://api.example.com")))]
        case .watch: [.watch(.all), .watch(.namespace("feed")), .watch(.key("feed:home"))]
        case .unwatch: [.unwatch(nil), .unwatch(.key("feed:home"))]
        case .resetStats: [.resetStats]
        case .clearRequestLog: [.clearRequestLog]
        case .cancel: [.cancel(key: "feed:home")]
        case .setActive: [.setActive(key: "feed:home", active: true), .setActive(key: "feed:home", active: false)]
        case .clearActive: [.clearActive]
        case .focus: [.focus]
        case .poll: [.poll(key: "badge:n", every: 1_500)]
        case .unpoll: [.unpoll(key: "badge:n")]
        case .unpollAll: [.unpollAll]
        case .configure: [.configure(CacheConfiguration(namespaces: ["feed": Policy(ttl: 60_000, max: 10)],
                                                        push: ["p": PushRule(invalidate: ["feed:*"])], idField: "id"))]
        case .restore: [.restore(snapshot: Self.snapshot)]
        case .unsupported: [.unsupported("schedule")]
        case .httpGet: [.httpGet(key: "api:/feed", request: HTTPFields([.init("Accept-Language", "en")]), nowait: false),
                        .httpGet(key: "api:/feed?page=2", request: HTTPFields(), nowait: true)]
        case .httpRequest: [.httpRequest(method: "PUT", key: "api:/feed", request: HTTPFields(), body: ["n": 1], nowait: false),
                            .httpRequest(method: "HEAD", key: "api:/feed", request: HTTPFields([.init("Cache-Control", "no-cache")]),
                                         body: nil, nowait: true)]
        }
    }

    static let snapshot: JSONValue = Cache().withIsolation { $0.makeSnapshot() }
    static let at = TimeText.virtualEpochMs

    static func recording(_ call: CacheCall) -> CacheRecording {
        CacheRecording(records: [.begin(snapshot: snapshot, live: false), .call(call, returned: .nothing, at: at, ended: at),
                                 .end(at: at)])
    }

    @Test func everyCallReadsBackFromARecordingAsItWasWritten() throws {
        for kind in CacheCall.Kind.allCases {
            for call in Self.samples(kind) {
                #expect(call.kind == kind)
                let text = RecordingFormat.text(of: Self.recording(call))
                #expect(text.contains(#""name":"\#(kind.rawValue)""#), "\(text)")
                #expect(try RecordingFormat.parse(text) == Self.recording(call), "\(text)")
            }
        }
    }

    /// The commands that declare they write `kind`.
    static func writers(of kind: CacheCall.Kind) -> [CommandSpec] {
        (CommandCatalog.all + CommandCatalog.all.flatMap(\.subcommands)).filter { $0.writes?.kinds.contains(kind) ?? false }
    }

    @Test func everyKindButUnsupportedIsWrittenByExactlyOneCommand() {
        for kind in CacheCall.Kind.allCases {
            #expect(Self.writers(of: kind).count == (kind == .unsupported ? 0 : 1), "\(kind): \(Self.writers(of: kind).map(\.name))")
        }
    }

    @Test func everyCallIsWrittenAsTheCommandThatDeclaresIt() throws {
        for kind in CacheCall.Kind.allCases where kind != .unsupported {
            let spec = try #require(Self.writers(of: kind).first)
            for call in Self.samples(kind) {
                let transcript = try RecordingTranscript.text(of: Self.recording(call))
                // The call's command: the line after the restore and `server strict on` written first
                // (a restore is followed by `server strict on` again).
                let commands = transcript.split(separator: "\n").filter { $0.hasPrefix("cachesh> ") }.map { $0.dropFirst(9) }
                try #require(commands.count == (kind == .restore ? 4 : 3), "\(transcript)")
                let words = commands[2].split(separator: " ").map(String.init)
                // `deactivate KEY` is `setActive(key, false)`, written by `activate`'s form.
                if case .setActive(_, false) = call {
                    #expect(words.first == "deactivate")
                    continue
                }
                let named = CommandCatalog.info(words[0])
                let written = named?.subcommands.isEmpty == false ? named?.subcommands.first { $0.name == words[1] } : named
                #expect(written === spec, "\(call) was written as \(commands[2])")
            }
        }
    }

    @Test func aCallNoCommandMakesIsRefusedByName() {
        #expect(throws: Diagnostic.self) { try RecordingTranscript.text(of: Self.recording(.unsupported("schedule"))) }
    }
}
