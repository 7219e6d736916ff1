import CacheCore
import CacheShell
import Testing
import TestSupport

/// A session after running `commands`, and the completion snapshot taken from it.
private func snapshot(after commands: [String], sourceLocation: SourceLocation = #_sourceLocation) async -> CompletionSnapshot {
    let session = await TestShell()
    for command in commands {
        let output = await session.typed(command)
        #expect(!output.hasPrefix("error:"), "\(command): \(output)", sourceLocation: sourceLocation)
    }
    let index = CompletionIndex()
    await session.run { _, cache in index.update(from: cache) }
    return index.snapshot
}

/// The snapshot most tests complete in.
private func fixture() async -> CompletionSnapshot { await snapshot(after: [
    "ns feed ttl=45m",
    "put feed:home [1] tags=home,front",
    "put feed:hot [2]",
    "put profile:42 {\"id\": 42} tags=people",
    "advance 1s",
]) }

/// The candidates Tab offers for `typed`, or nil when it offers nothing.
private func candidates(_ typed: String, in snapshot: CompletionSnapshot? = nil,
                        files: [String: [String]] = [:]) async -> [String]? {
    let snapshot = if let snapshot { snapshot } else { await fixture() }
    return Completer.complete(typed, in: snapshot, listDirectory: { files[$0] ?? [] })?.candidates
}

@Test func uniqueCommandNameCompletes() async {
    #expect(await candidates("ge") == ["get"])
    #expect(CompletionResult.terminator(after: "get") == " ")
}

@Test func ambiguousCommandNamesShareTheirCommonPrefix() async throws {
    let result = try #require(Completer.complete("s", in: await fixture()))
    #expect(result.candidates.contains("server"))
    #expect(result.candidates.contains("source"))
    #expect(result.candidates.allSatisfy { $0.hasPrefix("s") })
    #expect(result.commonPrefix == "s")
    #expect(result.replaced == "s")
}

@Test func emptyLineOffersEveryCommand() async {
    #expect(await candidates("") == CommandCatalog.all.map(\.name).sorted())
}

@Test(arguments: [
    ("server of", ["offline"]),
    ("server onl", ["online"]),
    ("event pa", ["patch"]),
    ("event en", ["entity"]),
])
func subcommandsComplete(typed: String, expected: [String]) async {
    #expect(await candidates(typed) == expected)
}

@Test func serverFormsCompleteTheirArguments() async {
    #expect(await candidates("server set feed:h") == ["feed:home", "feed:hot"])
    #expect(await candidates("server show prof") == ["profile:", "profile:42"])
    #expect(await candidates("server log c") == ["clear"])
    #expect(await candidates("server ")?.contains("latency") == true)
    #expect(Completer.hint(for: "server set ", in: await fixture()) == "KEY [VALUE] [version=N] [headers={...}] [text=\"...\"] [binary=SIZE:sha256:HEX]")
    #expect(Completer.hint(for: "server set feed:x ", in: await fixture()) == "[VALUE] [version=N] [headers={...}] [text=\"...\"] [binary=SIZE:sha256:HEX]")
}

@Test func literalArgumentsComplete() async {
    #expect(await candidates("stats r") == ["reset"])
    #expect(await candidates("record st") == ["stop"])
    #expect(await candidates("output j") == ["json"])
    #expect(await candidates("watch ")?.contains("*") == true)
    #expect(await candidates("watch ")?.contains("feed:*") == true)
}

@Test func optionNamesComplete() async {
    #expect(await candidates("get feed:home --f") == ["--force"])
    #expect(await candidates("ns feed tt") == ["ttl="])
    #expect(CompletionResult.terminator(after: "ttl=") == "")
}

@Test func keysWithColonsComplete() async throws {
    #expect(await candidates("get feed:hom") == ["feed:home"])
    let ambiguous = try #require(Completer.complete("get feed:h", in: await fixture()))
    #expect(ambiguous.candidates == ["feed:home", "feed:hot"])
    #expect(ambiguous.commonPrefix == "feed:ho")
    #expect(ambiguous.total == 2)
}

@Test func namespacesAreOfferedAsTheStartOfAKey() async {
    #expect(await candidates("get pro") == ["profile:", "profile:42"])
    #expect(CompletionResult.terminator(after: "profile:") == "")
    #expect(await candidates("clear fe") == ["feed", "feed:*"])
}

@Test func tagsCompleteAfterTagPrefix() async throws {
    let result = try #require(Completer.complete("invalidate tag:h", in: await fixture()))
    #expect(result.candidates == ["home"])
    #expect(result.replaced == "h")
    #expect(await candidates("invalidate ta") == ["tag:"])
    #expect(await candidates("invalidate tag:") == ["front", "home", "people"])
}

@Test func pushTypesAndTheirParametersComplete() async {
    let configured = await snapshot(after: ["put profile:7 1"])
    var withPush = configured
    withPush.pushTypes = [("friend-blocked", ["user"]), ("profile-updated", ["user"])]
    #expect(await candidates("push fr", in: withPush) == ["friend-blocked"])
    #expect(await candidates("push friend-blocked u", in: withPush) == ["user="])
}

@Test func fileNamesCompleteAfterFileCommands() async throws {
    let files = ["": ["examples/", "feed.cachesh", ".hidden"], "examples/": ["demo.cachesh", "deep/"]]
    for command in ["load", "source", "restore", "snapshot", "record"] {
        #expect(await candidates("\(command) fe", files: files) == ["feed.cachesh"], "\(command)")
    }
    let nested = try #require(Completer.complete("source examples/d", in: await fixture(), listDirectory: { files[$0] ?? [] }))
    #expect(nested.candidates == ["deep/", "demo.cachesh"])
    #expect(nested.replaced == "d")
    #expect(await candidates("source ", files: files) == ["examples/", "feed.cachesh"])
}

@Test func scheduledCommandsComplete() async {
    #expect(await candidates("at 5s ge") == ["get"])
    #expect(await candidates("at 5s get feed:hom") == ["feed:home"])
}

@Test func nothingCompletesInsideAJSONValueOrAComment() async {
    #expect(await candidates("put feed:x {\"a\": fe") == nil)
    #expect(await candidates("put feed:x \"fe") == nil)
    #expect(await candidates("# get fe") == nil)
    #expect(await candidates("frobnicate fe") == nil)
}

// MARK: - Hints

@Test func hintShowsTheRestOfTheSynopsis() async throws {
    let synopsis = try #require(CommandCatalog.info("get")).synopsis
    let rest = String(synopsis.dropFirst("get ".count))
    #expect(Completer.hint(for: "get", in: await fixture()) == rest)
    #expect(Completer.hint(for: "get ", in: await fixture()) == rest)
    #expect(Completer.hint(for: "get feed:nothing ", in: await fixture())?.contains("KEY") == false)
    #expect(Completer.hint(for: "frobnicate ", in: await fixture()) == nil)
    #expect(Completer.hint(for: "", in: await fixture()) == nil)
}

@Test func hintDropsOptionsOnceTyped() async throws {
    let before = try #require(Completer.hint(for: "ns feed ", in: await fixture()))
    #expect(before.contains("ttl="))
    let after = try #require(Completer.hint(for: "ns feed ttl=5m ", in: await fixture()))
    #expect(!after.contains("ttl="))
    #expect(after.contains("stale="))
}

@Test func hintAfterACachedKeyShowsItsStateAndExpiry() async {
    #expect(Completer.hint(for: "get feed:home", in: await fixture()) == "fresh, expires in 44m59s")
    #expect(Completer.hint(for: "at 1s peek feed:home", in: await fixture()) == "fresh, expires in 44m59s")
    let stale = await snapshot(after: ["ns feed ttl=1m stale=30s", "put feed:home 1", "advance 40s"])
    #expect(Completer.hint(for: "get feed:home", in: stale) == "stale, expires in 20s")
    let expired = await snapshot(after: ["ns feed ttl=1m", "put feed:home 1", "advance 90s"])
    #expect(Completer.hint(for: "get feed:home", in: expired) == "expired 30s ago")
}

// MARK: - The index

@Test func indexFollowsTheSession() async {
    let session = await TestShell()
    let index = CompletionIndex()
    _ = await session.typed("put feed:a 1 tags=t1")
    await session.run { _, cache in index.update(from: cache) }
    #expect(index.snapshot.keys == ["feed:a"])
    #expect(index.snapshot.tags == ["t1"])
    #expect(index.snapshot.namespaces == ["feed"])
    _ = await session.typed("evict feed:a")
    await session.run { _, cache in index.update(from: cache) }
    #expect(index.snapshot.keys.isEmpty)
    #expect(index.snapshot.tags.isEmpty)
}

@Test func keyRangeIsByteWisePrefix() async {
    let snapshot = CompletionSnapshot(keys: ["b:1", "a:é", "a:e", "a:", "ab:1"].map { ($0, EntryState.fresh, Int64.max) })
    #expect(snapshot.keys == ["a:", "a:e", "a:é", "ab:1", "b:1"])
    #expect(snapshot.keyRange(prefix: "a:").map { snapshot.keys[$0] } == ["a:", "a:e", "a:é"])
    #expect(snapshot.keyRange(prefix: "a:é").count == 1)
    #expect(snapshot.keyRange(prefix: "c").isEmpty)
    #expect(snapshot.keyRange(prefix: "").count == 5)
}

/// Completion over 100,000 cached keys lists a bounded page and counts the rest (its speed is
/// measured by Benchmarks/interactive.py, not here).
@Test func completionOver100kKeysListsABoundedPage() async throws {
    let entries = (0..<100_000).map { ("feed:\($0)", EntryState.fresh, Int64(60_000)) }
    let big = CompletionSnapshot(keys: entries, namespaces: ["feed"])
    for typed in ["get feed:9999", "get feed:", "get f", "get feed:12345", "mget feed:1 feed:2"] {
        #expect(Completer.complete(typed, in: big) != nil, "\(typed)")
    }
    let wide = try #require(Completer.complete("get feed:", in: big))
    #expect(wide.total == 100_000)
    #expect(wide.candidates.count == 200)
    #expect(Completer.complete("get feed:9999", in: big)?.total == 11)
    #expect(Completer.hint(for: "get feed:54321", in: big) != nil)
}

/// Options with a few named values complete them after `=`, as commands and keys complete:
/// `policy=` the eviction policies, `naive=` each name of its comma-separated list, `replay`'s
/// `format=`, `time-unit=`, `header=` and `policy=` (with `optimal`), `none` where a duration may be unset.
@Test(arguments: [
    ("ns feed policy=", "", ["fifo", "lfu", "lru", "sieve"]),
    ("ns feed policy=s", "s", ["sieve"]),
    ("ns feed naive=j", "j", ["join-refetch"]),
    ("ns feed naive=join-refetch,se", "se", ["serve-expired"]),
    ("ns feed stale=n", "n", ["none"]),
    ("ns feed timeout=", "", ["none"]),
    ("replay t.csv policy=lru,o", "o", ["optimal"]),
    ("replay t.csv format=", "", ["csv", "keys", "oracle", "timed"]),
    ("replay t.csv time-unit=m", "m", ["ms"]),
    ("replay t.csv header=", "", ["no", "yes"]),
])
func enumeratedOptionValuesComplete(typed: String, replaced: String, expected: [String]) async throws {
    let result = try #require(Completer.complete(typed, in: await fixture()))
    #expect(result.candidates == expected)
    #expect(result.replaced == replaced)
}

/// An option whose values are open (a duration, a count) still offers nothing after `=`.
@Test func openOptionValuesOfferNothing() async {
    #expect(await candidates("ns feed ttl=") == nil)
    #expect(await candidates("ns feed policy=x") == nil)
}
