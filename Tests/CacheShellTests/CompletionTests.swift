import CacheCore
import CacheShell
import Testing

/// A session after running `commands`, and the completion snapshot taken from it.
private func snapshot(after commands: [String], sourceLocation: SourceLocation = #_sourceLocation) -> CompletionSnapshot {
    let session = Session()
    for command in commands {
        let output = session.runTyped(command)
        #expect(!output.hasPrefix("error:"), "\(command): \(output)", sourceLocation: sourceLocation)
    }
    let index = CompletionIndex()
    index.update(from: session.engine)
    return index.snapshot
}

private let cache = snapshot(after: [
    "ns feed ttl=45m",
    "put feed:home [1] tags=home,front",
    "put feed:hot [2]",
    "put profile:42 {\"id\": 42} tags=people",
    "advance 1s",
])

/// The candidates Tab offers for `typed`, or nil when it offers nothing.
private func candidates(_ typed: String, in snapshot: CompletionSnapshot = cache,
                        files: [String: [String]] = [:]) -> [String]? {
    Completer.complete(typed, in: snapshot, listDirectory: { files[$0] ?? [] })?.candidates
}

@Test func uniqueCommandNameCompletes() {
    #expect(candidates("ge") == ["get"])
    #expect(CompletionResult.terminator(after: "get") == " ")
}

@Test func ambiguousCommandNamesShareTheirCommonPrefix() throws {
    let result = try #require(Completer.complete("s", in: cache))
    #expect(result.candidates.contains("server"))
    #expect(result.candidates.contains("source"))
    #expect(result.candidates.allSatisfy { $0.hasPrefix("s") })
    #expect(result.commonPrefix == "s")
    #expect(result.replaced == "s")
}

@Test func emptyLineOffersEveryCommand() {
    #expect(candidates("") == CommandCatalog.all.map(\.name).sorted())
}

@Test(arguments: [
    ("server of", ["offline"]),
    ("server onl", ["online"]),
    ("event pa", ["patch"]),
    ("event en", ["entity"]),
])
func subcommandsComplete(typed: String, expected: [String]) {
    #expect(candidates(typed) == expected)
}

@Test func serverFormsCompleteTheirArguments() {
    #expect(candidates("server set feed:h") == ["feed:home", "feed:hot"])
    #expect(candidates("server show prof") == ["profile:", "profile:42"])
    #expect(candidates("server log c") == ["clear"])
    #expect(candidates("server ")?.contains("latency") == true)
    #expect(Completer.hint(for: "server set ", in: cache) == "KEY VALUE")
    #expect(Completer.hint(for: "server set feed:x ", in: cache) == "VALUE")
}

@Test func literalArgumentsComplete() {
    #expect(candidates("stats r") == ["reset"])
    #expect(candidates("record st") == ["stop"])
    #expect(candidates("output j") == ["json"])
    #expect(candidates("watch ")?.contains("*") == true)
    #expect(candidates("watch ")?.contains("feed:*") == true)
}

@Test func optionNamesComplete() {
    #expect(candidates("get feed:home --f") == ["--force"])
    #expect(candidates("ns feed tt") == ["ttl="])
    #expect(CompletionResult.terminator(after: "ttl=") == "")
}

@Test func keysWithColonsComplete() throws {
    #expect(candidates("get feed:hom") == ["feed:home"])
    let ambiguous = try #require(Completer.complete("get feed:h", in: cache))
    #expect(ambiguous.candidates == ["feed:home", "feed:hot"])
    #expect(ambiguous.commonPrefix == "feed:ho")
    #expect(ambiguous.total == 2)
}

@Test func namespacesAreOfferedAsTheStartOfAKey() {
    #expect(candidates("get pro") == ["profile:", "profile:42"])
    #expect(CompletionResult.terminator(after: "profile:") == "")
    #expect(candidates("clear fe") == ["feed"])
}

@Test func tagsCompleteAfterTagPrefix() throws {
    let result = try #require(Completer.complete("invalidate tag:h", in: cache))
    #expect(result.candidates == ["home"])
    #expect(result.replaced == "h")
    #expect(candidates("invalidate ta") == ["tag:"])
    #expect(candidates("invalidate tag:") == ["front", "home", "people"])
}

@Test func pushTypesAndTheirParametersComplete() {
    let configured = snapshot(after: ["put profile:7 1"])
    var withPush = configured
    withPush.pushTypes = [("friend-blocked", ["user"]), ("profile-updated", ["user"])]
    #expect(candidates("push fr", in: withPush) == ["friend-blocked"])
    #expect(candidates("push friend-blocked u", in: withPush) == ["user="])
}

@Test func fileNamesCompleteAfterFileCommands() throws {
    let files = ["": ["examples/", "feed.cachesh", ".hidden"], "examples/": ["demo.cachesh", "deep/"]]
    for command in ["load", "source", "restore", "snapshot", "record"] {
        #expect(candidates("\(command) fe", files: files) == ["feed.cachesh"], "\(command)")
    }
    let nested = try #require(Completer.complete("source examples/d", in: cache, listDirectory: { files[$0] ?? [] }))
    #expect(nested.candidates == ["deep/", "demo.cachesh"])
    #expect(nested.replaced == "d")
    #expect(candidates("source ", files: files) == ["examples/", "feed.cachesh"])
}

@Test func scheduledCommandsComplete() {
    #expect(candidates("at 5s ge") == ["get"])
    #expect(candidates("at 5s get feed:hom") == ["feed:home"])
}

@Test func nothingCompletesInsideAJSONValueOrAComment() {
    #expect(candidates("put feed:x {\"a\": fe") == nil)
    #expect(candidates("put feed:x \"fe") == nil)
    #expect(candidates("# get fe") == nil)
    #expect(candidates("frobnicate fe") == nil)
}

// MARK: - Hints

@Test func hintShowsTheRestOfTheSynopsis() throws {
    let synopsis = try #require(CommandCatalog.info("get")).synopsis
    let rest = String(synopsis.dropFirst("get ".count))
    #expect(Completer.hint(for: "get", in: cache) == rest)
    #expect(Completer.hint(for: "get ", in: cache) == rest)
    #expect(Completer.hint(for: "get feed:nothing ", in: cache)?.contains("KEY") == false)
    #expect(Completer.hint(for: "frobnicate ", in: cache) == nil)
    #expect(Completer.hint(for: "", in: cache) == nil)
}

@Test func hintDropsOptionsOnceTyped() throws {
    let before = try #require(Completer.hint(for: "ns feed ", in: cache))
    #expect(before.contains("ttl="))
    let after = try #require(Completer.hint(for: "ns feed ttl=5m ", in: cache))
    #expect(!after.contains("ttl="))
    #expect(after.contains("stale="))
}

@Test func hintAfterACachedKeyShowsItsStateAndExpiry() {
    #expect(Completer.hint(for: "get feed:home", in: cache) == "fresh, expires in 44m59s")
    #expect(Completer.hint(for: "at 1s peek feed:home", in: cache) == "fresh, expires in 44m59s")
    let stale = snapshot(after: ["ns feed ttl=1m stale=30s", "put feed:home 1", "advance 40s"])
    #expect(Completer.hint(for: "get feed:home", in: stale) == "stale, expires in 20s")
    let expired = snapshot(after: ["ns feed ttl=1m", "put feed:home 1", "advance 90s"])
    #expect(Completer.hint(for: "get feed:home", in: expired) == "expired 30s ago")
}

// MARK: - The index

@Test func indexFollowsTheSession() {
    let session = Session()
    let index = CompletionIndex()
    _ = session.runTyped("put feed:a 1 tags=t1")
    index.update(from: session.engine)
    #expect(index.snapshot.keys == ["feed:a"])
    #expect(index.snapshot.tags == ["t1"])
    #expect(index.snapshot.namespaces == ["feed"])
    _ = session.runTyped("evict feed:a")
    index.update(from: session.engine)
    #expect(index.snapshot.keys.isEmpty)
    #expect(index.snapshot.tags.isEmpty)
}

@Test func keyRangeIsByteWisePrefix() {
    let snapshot = CompletionSnapshot(keys: ["b:1", "a:é", "a:e", "a:", "ab:1"].map { ($0, EntryState.fresh, Int64.max) })
    #expect(snapshot.keys == ["a:", "a:e", "a:é", "ab:1", "b:1"])
    #expect(snapshot.keyRange(prefix: "a:").map { snapshot.keys[$0] } == ["a:", "a:e", "a:é"])
    #expect(snapshot.keyRange(prefix: "a:é").count == 1)
    #expect(snapshot.keyRange(prefix: "c").isEmpty)
    #expect(snapshot.keyRange(prefix: "").count == 5)
}

/// Completion and hints must answer within a frame (16 ms) with 100,000 cached keys.
@Test func completionOver100kKeysAnswersWithinAFrame() throws {
    let entries = (0..<100_000).map { ("feed:\($0)", EntryState.fresh, Int64(60_000)) }
    let big = CompletionSnapshot(keys: entries, namespaces: ["feed"])
    let clock = ContinuousClock()
    for typed in ["get feed:9999", "get feed:", "get f", "get feed:12345", "mget feed:1 feed:2"] {
        var best = Duration.seconds(1)
        var result: CompletionResult?
        for _ in 0..<5 {
            let elapsed = clock.measure { result = Completer.complete(typed, in: big) }
            best = min(best, elapsed)
        }
        #expect(best < .milliseconds(16), "\(typed): \(best)")
        #expect(result != nil)
    }
    let wide = try #require(Completer.complete("get feed:", in: big))
    #expect(wide.total == 100_000)
    #expect(wide.candidates.count == 200)
    #expect(Completer.complete("get feed:9999", in: big)?.total == 11)
    var best = Duration.seconds(1)
    for _ in 0..<5 {
        best = min(best, clock.measure { _ = Completer.hint(for: "get feed:54321", in: big) })
    }
    #expect(best < .milliseconds(16), "hint: \(best)")
}
