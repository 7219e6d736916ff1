/// How a namespace with a `max` picks the entry to evict when a new one would exceed it (SPEC B6).
///
/// Every policy evicts as if before the new entry is stored: the new entry is never the victim
/// unless it is the only entry (`max=0`). An access is a `get`/`mget` of a cached entry (in any
/// state), a `put` of a cached key, or a `mutate` of it; nothing else (SPEC §1.1 Eviction).
public enum Eviction: String, Sendable, CaseIterable, Hashable {
    /// Least recently used: an access makes the entry the most recent. No ties.
    case lru
    /// First in, first out: the entry stored earliest goes; accesses change nothing. No ties.
    case fifo
    /// SIEVE: an access sets the entry's visited bit; a hand walks from the oldest entry toward the
    /// newest, clearing visited bits, and evicts the first entry without one, wrapping to the oldest
    /// at the end; it then rests on the entry after the victim. New entries are unvisited and newest.
    case sieve
    /// Least frequently used: the entry with the fewest accesses since it was stored (a new entry
    /// has 1); among equals, the one that reached that count earliest. Counts are forgotten on eviction.
    case lfu
}

/// How long a namespace keeps its entries and how many (SPEC B1).
public struct Policy: Sendable, Equatable {
    /// After this an entry is expired (ms).
    public var ttl: Int64 = 300_000
    /// After this an entry is stale: still served, refreshed in the background (ms); nil = never stale by age.
    public var stale: Int64?
    /// Limit on entries; nil = unbounded.
    public var max: Int?
    /// Which entry goes when `max` is exceeded.
    public var eviction: Eviction = .lru
    /// How long past expiry a failed fetch may still serve the cached value (ms); nil = 0.
    public var staleIfError: Int64?
    /// The client gives up on a request after this (ms); nil = never.
    public var timeout: Int64?
    /// Removed by a memory warning.
    public var purgeable = false
    /// How many times a failed fetch is sent again before it fails (0: never).
    public var retry = 0
    /// The wait before the first retry (ms); each later one waits twice the one before.
    public var backoff: Int64 = Policy.defaultBackoff
    /// `backoff` unless set: 1 s.
    public static let defaultBackoff: Int64 = 1000
    /// The naive policies switched on (SPEC §1.2): each reproduces a race a public bug report shows.
    public var naive: Set<NaivePolicy> = []
    /// A de-duplication window (ms; SPEC §1.2): a read that would send a fetch of a key less than
    /// this after a fetch of it was sent shares that one instead; nil = none.
    public var dedupe: Int64?
    /// An HTTP namespace's settings (docs/SPEC.md, HTTP namespaces); nil for an ordinary one.
    public var http: HTTPNamespace?

    public init(ttl: Int64 = 300_000, stale: Int64? = nil, max: Int? = nil, staleIfError: Int64? = nil,
                timeout: Int64? = nil, purgeable: Bool = false, eviction: Eviction = .lru, retry: Int = 0,
                backoff: Int64 = Policy.defaultBackoff, naive: Set<NaivePolicy> = [], dedupe: Int64? = nil) {
        self.ttl = ttl; self.stale = stale; self.max = max
        self.staleIfError = staleIfError; self.timeout = timeout; self.purgeable = purgeable
        self.eviction = eviction
        self.retry = retry; self.backoff = backoff
        self.naive = naive
        self.dedupe = dedupe
    }
}

/// A naive policy a namespace can switch on (SPEC §1.2), named for what it does. Each turns off
/// one rule of SPEC §1.1 the way a real client library did, so a script can show the race a
/// public bug report describes next to the rule that prevents it. All are off by default.
public enum NaivePolicy: String, CaseIterable, Sendable, Comparable {
    /// Every answer is stored fresh when it arrives (no B12: not an older request's answer over a
    /// newer write or answer, not an answer whose key was invalidated meanwhile stored stale).
    case lastAnswerWins = "last-answer-wins"
    /// A failed mutation restores the value shown just before it was applied, dropping whatever
    /// changed since (other optimistic mutations, realtime patches).
    case rollbackToSnapshot = "rollback-to-snapshot"
    /// A fetched answer replaces the value while mutations are pending, instead of having the
    /// pending mutations and later patches re-applied on top of it.
    case answerDropsMutations = "answer-drops-mutations"
    /// A refetch (`get --force`, a push's `refresh`) joins the fetch in flight instead of sending
    /// a new request, so it gets the answer to a request sent before the change it should see.
    case joinRefetch = "join-refetch"
    /// An expired value is served (and refreshed in the background) instead of fetched and waited for.
    case serveExpired = "serve-expired"
    /// A mutation's answer becomes the value with nothing re-applied on it: newer optimistic
    /// mutations still pending (and realtime patches) no longer show until their own answers.
    case confirmDropsNewer = "confirm-drops-newer"
    /// A mutation's answer becomes the base with the optimistic changes of the other pending
    /// mutations written into it: a later failure of one of them no longer removes its change.
    case confirmCommitsAll = "confirm-commits-all"
    /// A rollback changes the value without telling observers: a watcher keeps the optimistic value.
    case silentRollback = "silent-rollback"
    /// `focus` refetches every active key, fresh ones too.
    case focusRefetchesFresh = "focus-refetches-fresh"
    /// An invalidation of a polled key does not refetch it at once, even when active: the next
    /// poll turn does.
    case invalidateWaitsPoll = "invalidate-waits-poll"
    /// An invalidation of a key nobody watches (not active, no `watch` covering it) is dropped:
    /// the entry stays fresh.
    case invalidateDropsUnwatched = "invalidate-drops-unwatched"
    /// Events apply in the order they arrive: no version is compared (an event or answer older
    /// than the entry's version lands on it) and the echo of the client's own write (`--own`) is
    /// applied like any event.
    case eventsInArrivalOrder = "events-in-arrival-order"
    /// A mutation whose outcome is unknown (a `timeout=`, a lost answer) is rolled back as if it
    /// had failed: the entry keeps the value from before it, fresh, though the server may have
    /// applied it.
    case unknownOutcomeRollsBack = "unknown-outcome-rolls-back"
    /// Every mutation is retried as a fetch is (`retry=N`), `--idempotent` or not, and no retry
    /// carries an idempotency key: the server applies each attempt (the double increment).
    case retryWithoutIdempotencyKey = "retry-without-idempotency-key"
    /// A client's `persist` writes its whole cache of the namespace over the copy persisted for
    /// every client (the last writer's dump replaces the other's), instead of merging entry by
    /// entry. The shell's clients act on it (SPEC §3 Clients); the engine never reads it.
    case persistWholeCache = "persist-whole-cache"
    /// Reading or refetching a paged list (`pages`) reads page 1 only and marks the other pages
    /// fresh, as if refetched, with their old values (SWR's infinite list revalidating page 1).
    case pagesMarkedFresh = "pages-marked-fresh"
    /// The answer to a list's next page writes back the earlier pages as they were when it was
    /// requested, dropping writes made to them meanwhile (TanStack Query's fetchNextPage).
    case nextPageDropsWrites = "next-page-drops-writes"
    /// An HTTP namespace ignores RFC 5861's `stale-while-revalidate` and `stale-if-error` (the
    /// response's and the request's): a stale response is validated and waited for, and a
    /// validation that fails gets no stale response (OkHttp has neither).
    case ignoreStaleExtensions = "ignore-stale-extensions"
    /// An HTTP namespace keeps one stored response per key, the last, whatever its `Vary` says:
    /// a request of another variant is a miss whose answer replaces it.
    case oneVariantPerURL = "one-variant-per-url"
    /// An HTTP namespace handles a `304` to its validation as a failure: the read gets the 304
    /// without a body, counted a failure, and the stored response is not freshened.
    case notModifiedAsFailure = "not-modified-as-failure"
    /// An HTTP namespace stores a `304` to its validation as the response: a 200 with its fields
    /// and an empty body, which the read gets and later reads are served.
    case notModifiedAsEmpty = "not-modified-as-empty"
    /// An HTTP namespace ignores the `Age` field of the responses it stores: their age is counted
    /// from `Date` and the time they are stored, so a response already old upstream looks fresh.
    case ignoreAge = "ignore-age"

    public static func < (a: Self, b: Self) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }

    /// The switches as written in `naive=` and in JSON: comma-separated names in the order above.
    public static func text(_ set: Set<NaivePolicy>) -> String {
        set.isEmpty ? "none" : set.sorted().map(\.rawValue).joined(separator: ",")
    }

    /// Parses `naive=` text: `none`, or comma-separated names.
    /// - Returns: nil, with the offending name, when a name is unknown.
    public static func parse(_ text: String) -> Result<Set<NaivePolicy>, NaiveNameError> {
        if text == "none" { return .success([]) }
        var set = Set<NaivePolicy>()
        for name in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let p = NaivePolicy(rawValue: String(name)) else { return .failure(NaiveNameError(name: String(name))) }
            set.insert(p)
        }
        return .success(set)
    }
}

/// An unknown naive policy name.
public struct NaiveNameError: Error, Sendable {
    public var name: String
    public init(name: String) { self.name = name }
    public var message: String {
        "unknown naive policy \"\(name)\" (known: \(NaivePolicy.allCases.map(\.rawValue).joined(separator: ", ")), or none)"
    }
}

/// A change to some options of a policy; `.some(nil)` unsets an optional one (`stale=none`).
public struct PolicyChange: Sendable, Equatable {
    public var ttl: Int64?
    public var stale: Int64??
    public var max: Int??
    public var staleIfError: Int64??
    public var timeout: Int64??
    public var purgeable: Bool?
    public var eviction: Eviction?
    public var retry: Int?
    public var backoff: Int64?
    public var naive: Set<NaivePolicy>?
    public var dedupe: Int64??
    /// Makes the namespace an HTTP one, with these settings (there is no way back).
    public var http: HTTPNamespace?

    public init(ttl: Int64? = nil, stale: Int64?? = nil, max: Int?? = nil, staleIfError: Int64?? = nil,
                timeout: Int64?? = nil, purgeable: Bool? = nil, eviction: Eviction? = nil, retry: Int? = nil,
                backoff: Int64? = nil, naive: Set<NaivePolicy>? = nil, dedupe: Int64?? = nil, http: HTTPNamespace? = nil) {
        self.ttl = ttl; self.stale = stale; self.max = max
        self.staleIfError = staleIfError; self.timeout = timeout; self.purgeable = purgeable
        self.eviction = eviction
        self.retry = retry; self.backoff = backoff
        self.naive = naive
        self.dedupe = dedupe
        self.http = http
    }

    /// The policy with these changes applied.
    public func applied(to policy: Policy) -> Policy {
        var p = policy
        if let ttl { p.ttl = ttl }
        if let stale { p.stale = stale }
        if let max { p.max = max }
        if let staleIfError { p.staleIfError = staleIfError }
        if let timeout { p.timeout = timeout }
        if let purgeable { p.purgeable = purgeable }
        if let eviction { p.eviction = eviction }
        if let retry { p.retry = retry }
        if let backoff { p.backoff = backoff }
        if let naive { p.naive = naive }
        if let dedupe { p.dedupe = dedupe }
        if let http { p.http = http }
        return p
    }
}

/// A push rule (B9): what a push type invalidates, refreshes and evicts.
/// Targets are `KEY`, `NS:*` or `tag:T`, with `{name}` filled from the push's arguments.
public struct PushRule: Sendable, Equatable {
    public var invalidate: [String]
    public var refresh: [String]
    public var evict: [String]
    public init(invalidate: [String] = [], refresh: [String] = [], evict: [String] = []) {
        self.invalidate = invalidate; self.refresh = refresh; self.evict = evict
    }

    /// Why `target` is not a well-formed template, or nil when it is: each `{` opens a
    /// placeholder that the next `}` closes, with a name between them that holds no `{`
    /// (placeholders do not nest), and no `}` stands outside a placeholder. A push could never
    /// fill a broken one: `profile:{user` would be taken as a key with a brace in it.
    /// - Complexity: O(n) in the length of `target`.
    public static func templateProblem(_ target: String) -> String? {
        var open: String.Index?
        for i in target.indices {
            switch target[i] {
            case "{":
                if let start = open {
                    return "placeholders do not nest: { inside \(target[start...i])"
                }
                open = i
            case "}":
                guard let start = open else { return "} with no { before it" }
                if target.index(after: start) == i { return "the placeholder {} has no name (write {name})" }
                open = nil
            default:
                break
            }
        }
        if let start = open { return "the placeholder \(target[start...]) is not closed (write {name})" }
        return nil
    }

    /// The first target of the rule that is not a well-formed template (`templateProblem`), as
    /// `ACTION[I]: "TARGET": PROBLEM`, or nil.
    public var templateProblem: String? {
        for (action, targets) in [("invalidate", invalidate), ("refresh", refresh), ("evict", evict)] {
            for (i, target) in targets.enumerated() {
                if let problem = Self.templateProblem(target) {
                    return "\(action)[\(i)]: \(JSONValue.string(target).compactText): \(problem)"
                }
            }
        }
        return nil
    }

    /// The `{name}` placeholders the rule's targets use, in first-seen order.
    public var parameters: [String] {
        var seen: [String] = []
        for target in invalidate + refresh + evict {
            var rest = Substring(target)
            while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
                let name = String(rest[rest.index(after: open)..<close])
                if !seen.contains(name) { seen.append(name) }
                rest = rest[rest.index(after: close)...]
            }
        }
        return seen
    }
}

/// The configuration a `load` replaces as a whole (SPEC §5.1), less the server part.
public struct CacheConfiguration: Sendable, Equatable {
    public var namespaces: [String: Policy]
    public var push: [String: PushRule]
    public var idField: String
    public init(namespaces: [String: Policy] = [:], push: [String: PushRule] = [:], idField: String = "id") {
        self.namespaces = namespaces; self.push = push; self.idField = idField
    }
}

extension Policy {
    /// The most retries a namespace may ask for (the waits double: 30 retries of 1s wait over 34 years).
    public static let maxRetries = 30

    /// The wait before retry number `n` (1 for the first): `backoff` doubled `n - 1` times (exponential).
    public func backoffBeforeRetry(_ n: Int) -> Int64 {
        var wait = backoff
        for _ in 1..<Swift.max(1, n) { wait = wait.addingClamped(wait) }
        return wait
    }
}
