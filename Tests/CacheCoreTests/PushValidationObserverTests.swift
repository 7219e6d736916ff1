@_spi(Engine) import CacheCore
import CacheServer
import Testing

/// B9 push rules, B10 validation, B15 observers, and the live adapter for apps.
@Suite struct PushRuleTests {
    func spawn() -> Harness {
        let h = Harness(["friends": Policy(ttl: 60 * minute), "recommendations": Policy(ttl: 60 * minute),
                         "profile": Policy(ttl: 60 * minute)],
                        push: ["friend-blocked": PushRule(invalidate: ["friends:*", "recommendations:*", "profile:{user}"]),
                               "profile-updated": PushRule(refresh: ["profile:{user}"]),
                               "tag-deleted": PushRule(evict: ["tag:{tag}"]),
                               "new-posts": PushRule()])
        h.engine.put("friends:me", ["a", "b"])
        h.engine.put("recommendations:me", ["c"])
        h.engine.put("profile:7", ["name": "seven"])
        h.engine.put("profile:8", ["name": "eight"], tags: ["close"])
        return h
    }

    @Test func onePushInvalidatesSeveralNamespacesAndAKey() throws {
        let h = spawn()
        let keys = try h.engine.push("friend-blocked", arguments: ["user": "7"])
        #expect(keys == ["friends:me", "recommendations:me", "profile:7"])
        #expect(h.engine.peek("profile:8").state == .fresh)
        #expect(h.engine.stats().invalidations == 3)
    }

    @Test func refreshRuleFetchesTheKeyInTheBackground() throws {
        let h = spawn()
        h.server("profile:7", ["name": "Seven"])
        #expect(try h.engine.push("profile-updated", arguments: ["user": "7"]) == ["profile:7"])
        #expect(h.engine.stats().refreshes == 1)
        h.advance(100)
        #expect(h.value("profile:7") == ["name": "Seven"])
    }

    @Test func evictRuleOverATag() throws {
        let h = spawn()
        #expect(try h.engine.push("tag-deleted", arguments: ["tag": "close"]) == ["profile:8"])
        #expect(h.engine.peek("profile:8").state == .absent)
    }

    @Test func pushWithNoActionOnlyNotifiesObservers() throws {
        let h = spawn()
        h.engine.watch(.all)
        #expect(try h.engine.push("new-posts", arguments: [:]) == [])
        #expect(h.events.summary == ["pushed new-posts"])
    }

    @Test func unknownPushOrMissingArgumentIsAnErrorThatChangesNothing() {
        let h = spawn()
        #expect(throws: CacheError("push \"friend-blocked\" needs user=VALUE")) {
            try h.engine.push("friend-blocked", arguments: [:])
        }
        #expect(throws: CacheError.self) { try h.engine.push("nope", arguments: [:]) }
        #expect(h.engine.stats().invalidations == 0)
    }

    /// A rule whose target holds a placeholder no push can fill (unclosed, empty, nested, or a
    /// stray `}`) refuses the whole configuration, which changes nothing: `profile:{user` used to
    /// be taken as a key with a brace in it.
    @Test func brokenPlaceholdersRefuseTheWholeConfiguration() {
        let h = spawn()
        let problems = [
            "profile:{user": "the placeholder {user is not closed (write {name})",
            "profile:{}": "the placeholder {} has no name (write {name})",
            "profile:{a{b}}": "placeholders do not nest: { inside {a{",
            "profile:b}": "} with no { before it",
            "profile:{a}}": "} with no { before it",
        ]
        for (target, problem) in problems.sorted(by: { $0.key < $1.key }) {
            let configuration = CacheConfiguration(namespaces: ["profile": Policy(ttl: minute)],
                                                   push: ["ok": PushRule(evict: ["x:{y}"]), "t": PushRule(refresh: ["a:*", target])])
            #expect(throws: CacheError(#"push rule "t": refresh[1]: "# + JSONValue.string(target).compactText + ": " + problem)) {
                try h.engine.configure(configuration)
            }
            #expect(h.engine.pushRules.keys.sorted() == ["friend-blocked", "new-posts", "profile-updated", "tag-deleted"])
            #expect(h.engine.policy(of: "profile").ttl == 60 * minute)
        }
        #expect(PushRule.templateProblem("profile:{user}:{page}") == nil)
    }
}

@Suite struct ValidationTests {
    @Test func requestCarriesTheOldestStoredTimePerNamespace() throws {
        let h = Harness()
        h.engine.put("friends:1", 1)
        h.advance(minute)
        h.engine.put("friends:2", 2)
        h.engine.put("tags:1", 1)
        #expect(h.engine.validationRequest() == ["friends": h.engine.clockStart, "tags": h.engine.clockStart + minute])
    }

    @Test func invalidatedNamespaceTurnsStaleAndItemsAreStored() throws {
        let h = Harness()
        h.engine.put("friends:1", "old")
        h.engine.put("tags:1", "t")
        h.advance(minute)
        h.server("friends:1", "new")
        let result = try h.engine.validate(items: true)
        #expect(result.response?["friends"] == NamespaceVerdict(invalidate: true, items: ["friends:1": "new"]))
        #expect(result.response?["tags"] == NamespaceVerdict(invalidate: false, items: [:]))
        #expect(h.value("friends:1") == "new")
        #expect(h.engine.peek("friends:1").state == .fresh, "the item was stored as a fetch response after the invalidation")
        #expect(h.engine.peek("tags:1").state == .fresh)
        #expect(h.elapsed == minute + 100, "validate is a request: it takes the latency")
    }

    @Test func withoutItemsTheNamespaceOnlyTurnsStale() throws {
        let h = Harness()
        h.engine.put("friends:1", "old")
        h.advance(minute)
        h.server("friends:2", "x")
        let result = try h.engine.validate(items: false)
        #expect(result.response?["friends"] == NamespaceVerdict(invalidate: true))
        #expect(result.keys == ["friends:1"])
        #expect(h.engine.peek("friends:1").state == .stale)
    }
}

@Suite struct ObserverTests {
    @Test func watchingANamespaceReportsEachChangeWithItsCauseInOrder() throws {
        let h = Harness(["feed": Policy(ttl: minute, stale: 10_000, max: 1)])
        h.engine.watch(.namespace("feed"))
        h.server("feed:1", 1)
        h.engine.put("other", 0)
        _ = h.get("feed:1")
        h.advance(20_000)
        _ = h.get("feed:1")
        h.advance(100)
        h.engine.invalidate(.key("feed:1"))
        h.engine.put("feed:2", 2)
        h.advance(minute)
        #expect(h.events.summary == ["fetched feed:1", "refreshed feed:1", "invalidated feed:1", "stored feed:2",
                                     "evicted feed:1", "expired feed:2"])
        #expect(h.events.events[0].source == .server && h.events.events[3].source == .cache)
    }

    @Test func unwatchStopsReports() {
        let h = Harness()
        h.engine.watch(.key("k"))
        h.engine.put("k", 1)
        h.engine.unwatch(.key("k"))
        h.engine.put("k", 2)
        #expect(h.events.summary == ["stored k"])
    }
}

@Suite struct CacheActorTests {
    @Test func virtualCacheActorRunsTheSameEngine() async throws {
        let origin = SimulatedServer()
        origin.set("k", "v", at: 0)
        let cache = Cache(origin: origin)
        let r = try await cache.get("k")
        #expect(r.value == "v" && r.source == .server)
        #expect(await cache.now == TimeText.virtualEpochMs + 100)
    }

    @Test func liveCacheSuspendsUntilTheAppsAsyncFetchAnswers() async throws {
        let cache = Cache(fetch: { keys in
            var out: [String: JSONValue] = [:]
            for key in keys where key != "missing" { out[key] = .string("fetched \(key)") }
            return out
        }, clock: FixedClock(ms: 1_000_000))
        let first = try await cache.get("feed:home")
        #expect(first.value == "fetched feed:home" && first.source == .server)
        let second = try await cache.get("feed:home")
        #expect(second.source == .cache && second.state == .fresh)
        let missing = try await cache.get("missing")
        #expect(missing.error == "not found" && missing.value == nil)
        #expect(await cache.stats().requests == 2)
    }

    @Test func changesStreamDeliversEvents() async throws {
        let cache = Cache(origin: SimulatedServer())
        let stream = await cache.changes(in: .all)
        await cache.put("a", 1)
        await cache.put("b", 2)
        var seen: [String] = []
        for await event in stream {
            seen.append("\(event.cause.rawValue) \(event.key)")
            if seen.count == 2 { break }
        }
        #expect(seen == ["stored a", "stored b"])
    }
}

@Suite("Push arguments are data")
struct PushArgumentTests {
    /// Whichever of the two arguments is filled first (a dictionary's order is the same on every
    /// run of one process, so running this again would test nothing new), the one that looks like a
    /// template is refused for what it is, and nothing changes.
    @Test("an argument value that looks like a template is refused, not substituted again")
    func pushArgumentValuesAreNotSubstitutedAgain() throws {
        let h = Harness(push: ["p": PushRule(invalidate: ["a:{u}", "b:{v}"])])
        _ = h.engine.put("a:1", 1, tags: [])
        _ = h.engine.put("b:1", 1, tags: [])
        for (name, arguments) in [("u", ["u": "{v}", "v": "1"]), ("v", ["u": "1", "v": "{u}"])] {
            #expect(throws: CacheError("push argument \(name)=\(arguments[name]!) may not contain * ? [ ] { or }")) {
                try h.engine.push("p", arguments: arguments)
            }
            #expect(h.engine.peek("a:1").state == .fresh)
            #expect(h.engine.peek("b:1").state == .fresh)
        }
    }

    @Test("user=* cannot turn a key target into a whole namespace; nothing changes")
    func aPushArgumentCannotTurnAKeyTargetIntoANamespace() throws {
        let h = Harness(push: ["p": PushRule(invalidate: ["profile:{user}"])])
        _ = h.engine.put("profile:1", 1, tags: [])
        _ = h.engine.put("profile:2", 2, tags: [])
        #expect(throws: CacheError("push argument user=* may not contain * ? [ ] { or }")) {
            try h.engine.push("p", arguments: ["user": "*"])
        }
        #expect(h.engine.peek("profile:1").state == .fresh)
        #expect(h.engine.peek("profile:2").state == .fresh)
    }

    @Test("two templates in one target are both filled")
    func twoTemplates() throws {
        let h = Harness(push: ["p": PushRule(invalidate: ["{ns}:{id}"])])
        _ = h.engine.put("profile:7", 1, tags: [])
        #expect(try h.engine.push("p", arguments: ["ns": "profile", "id": "7"]) == ["profile:7"])
    }
}
