import CacheCore

/// A simulated server: data per key with modification times, latency (global and per key),
/// scripted failures and an offline switch. It handles each request when it is sent — a fetch
/// answers with the data as of that moment, a mutation changes the data then (unless the request
/// fails) — and the engine delivers the answer after the latency (SPEC §1.1 "The server").
///
/// The shell drives it through `server ...` commands; apps use it to test their cache setup.
public final class SimulatedServer: Origin, PersistentOrigin {
    public private(set) var data: [String: JSONValue] = [:]
    /// When each key last changed (set, patch, delete, event, mutation, load): for validation.
    public private(set) var modifiedAt: [String: Int64] = [:]
    public var latency: Int64 = 100
    public var latencies: [String: Int64] = [:]
    // Unchecked exclusivity: a `Bool` that is only read or assigned whole (`server offline` and
    // `online`, `restore`, tests) or toggled in place (a test's `toggle()`, which calls nothing
    // that could read it meanwhile), so no two accesses to it can overlap. The engine reads it on every `get`; checked, each read paid a dynamic access check.
    @exclusivity(unchecked) public var isOnline = true
    public var idField = "id"
    /// The version of each key that has one (SPEC §1.1 Versions): given by `server set ...
    /// version=N` or a newer versioned event, then one more at each change of the key's data
    /// (set, patch, delete, an event without a version, a mutation). Its answers from the data
    /// carry it. Kept by snapshots and stores (`server.versions`).
    public private(set) var versions: [String: UInt64] = [:]
    /// The header fields each key of an HTTP namespace is served with (`server set ... headers=`),
    /// besides the `Date` the server adds (docs/SPEC.md, HTTP namespaces), kept by snapshots (the
    /// `server` section's `headers`) and stores (the key's row).
    public private(set) var headers: [String: HTTPFields] = [:]
    /// The text or binary body an HTTP key is served with (`server set KEY text=...`); its data
    /// holds the body's entry value (`HTTPBody.entryValue`). A JSON body has none here.
    public private(set) var bodies: [String: HTTPBody] = [:]
    /// Requests of any kind still to fail.
    public private(set) var failNext = 0
    /// Requests involving a key still to fail, by key.
    public private(set) var failKey: [String: Int] = [:]
    /// Keys whose data or modification time changed since a store last took them; nil when no
    /// store tracks them.
    private var changedKeys: Set<String>?
    /// Scripted answers (`server next`), by key, each key's in the order its requests take them.
    /// Kept by snapshots and stores (`server.next`, `server.next_validations`, `server.strict`).
    public internal(set) var scripted: [String: [ScriptedAnswer]] = [:]
    /// Scripted answers to validation requests, in order.
    public internal(set) var scriptedValidations: [ScriptedAnswer] = []
    /// The idempotency keys of the mutations applied (SPEC §1.1 Retries): a mutation carrying one
    /// of them is not applied again. Kept by snapshots and stores (`server.idempotency_keys`).
    private var appliedKeys = AppliedKeys()
    /// With strict on, a request that finds nothing queued gets no answer and is a divergence.
    public var strict = false
    /// The first request strict mode found nothing queued for, since `takeDivergence()`.
    var divergence: String?

    public init() {}

    // MARK: Shaping the server

    /// Makes the next `n` requests fail (of any kind, or only those involving `key`).
    public func fail(next n: Int, key: String? = nil) {
        if let key {
            let key = KeyName.canonical(key)
            if n > 0 { failKey[key] = n } else { failKey.removeValue(forKey: key) }
        } else {
            failNext = max(0, n)
        }
    }

    /// Sets a key's data (without telling the client); with `version`, the key's version becomes
    /// it, else a versioned key's version goes one up.
    public func set(_ key: String, _ value: JSONValue, at now: Int64, version: UInt64? = nil, headers fields: HTTPFields? = nil) {
        let key = KeyName.canonical(key)
        if let fields { headers[key] = fields }
        bodies[key] = nil
        data[key] = value
        modifiedAt[key] = now
        changedKeys?.insert(key)
        if let version { versions[key] = min(version, KeyAnswer.maxVersion) } else { bumpVersion(key) }
    }

    /// A versioned key's version one up (kept at `KeyAnswer.maxVersion` once there).
    private func bumpVersion(_ key: String) {
        if let v = versions[key] { versions[key] = min(v + 1, KeyAnswer.maxVersion) }
    }

    /// An event's change of `key` reaching the data. An event with a version not newer than the
    /// key's is the late notice of a state the server has already passed: the data stays (SPEC
    /// §1.1 Versions). - Returns: whether the data changed.
    @discardableResult
    public func applyEvent(_ key: String, _ value: JSONValue, at now: Int64, version: UInt64?) -> Bool {
        let key = KeyName.canonical(key)
        if let version, let held = versions[key], version <= held { return false }
        set(key, value, at: now, version: version)
        return true
    }

    /// Deletes a key's data. - Returns: whether it existed.
    @discardableResult
    /// Sets an HTTP key's representation to a body of any kind (`server set KEY text=...`).
    public func set(_ key: String, body: HTTPBody, at now: Int64, headers fields: HTTPFields? = nil) {
        set(key, body.entryValue, at: now, headers: fields)
        if case .json = body { return }
        bodies[KeyName.canonical(key)] = body
    }

    public func delete(_ key: String, at now: Int64) -> Bool {
        let key = KeyName.canonical(key)
        guard data.removeValue(forKey: key) != nil else { return false }
        headers[key] = nil
        bodies[key] = nil
        modifiedAt[key] = now
        changedKeys?.insert(key)
        bumpVersion(key)
        return true
    }

    /// The answer the data gives for `key`: its value, with its version when it has one.
    func answerFromData(_ key: String) -> KeyAnswer {
        data[key].map { KeyAnswer.answer($0, version: versions[key]) } ?? .notFound
    }

    /// The value a key's data would have after `patch`, without changing it.
    /// - Throws: `PatchError` when it does not apply; nil when the server does not have the key.
    public func patched(_ key: String, _ patch: Patch) throws(PatchError) -> JSONValue? {
        guard let value = data[KeyName.canonical(key)] else { return nil }
        return try patch.apply(to: value)
    }

    /// Every key whose data embeds entity `id`, with its patched value; all or nothing.
    /// - Complexity: O(size of all data): the server keeps no index (the cache's id index is the point).
    public func patchedEntities(_ id: String, _ patch: Patch) throws(PatchError) -> [(key: String, value: JSONValue)] {
        var out: [(key: String, value: JSONValue)] = []
        for key in data.keys.sorted() {
            let (value, matches) = try data[key]!.patchingEntities(id: id, idField: idField, with: patch)
            if matches > 0 { out.append((key, value)) }
        }
        return out
    }

    /// Replaces all data (a configuration's `server.data`), stamping every key.
    public func replaceData(_ newData: [String: JSONValue], at now: Int64) {
        for key in data.keys where newData[key] == nil {
            modifiedAt[key] = now
            changedKeys?.insert(key)
            // Gone as by `delete`: a body kind or headers left for a key without data would be
            // written into every snapshot and store, which refuse them on reading.
            headers[key] = nil
            bodies[key] = nil
        }
        data = [:]
        for (key, value) in newData { set(key, value, at: now) }
    }

    // MARK: PersistentOrigin (snapshots and stores)

    public var persistentState: (any PersistentOrigin)? { self }

    public func snapshot(withData: Bool) -> OriginState {
        var state = OriginState(data: withData ? data : [:], modifiedAt: withData ? modifiedAt : [:], settings: [
            "latency_ms": .int(latency),
            "latencies_ms": .object(latencies.mapValues(JSONValue.int)),
            "online": .bool(isOnline),
            "id_field": .string(idField),
            "fail_next": .int(Int64(failNext)),
            "fail_keys": .object(failKey.mapValues { .int(Int64($0)) }),
        ])
        // A store keeps them in the key's row (`storedKey`).
        if withData { state.headers = headers }
        // Each written only when it holds something, so a file without them is as before.
        if !versions.isEmpty { state.settings["versions"] = .object(versions.mapValues { .int(Int64($0)) }) }
        if !bodies.isEmpty { state.settings["bodies"] = .object(bodies.mapValues { .string($0.kind) }) }
        if !appliedKeys.isEmpty {
            state.settings["idempotency_keys"] = .array(appliedKeys.inOrder.map { .array([.int(Int64($0.client)), .int(Int64($0.mutation))]) })
        }
        if !scripted.isEmpty { state.settings["next"] = .object(scripted.mapValues { .array($0.map(\.json)) }) }
        if !scriptedValidations.isEmpty { state.settings["next_validations"] = .array(scriptedValidations.map(\.json)) }
        if strict { state.settings["strict"] = true }
        return state
    }

    public func check(_ state: OriginState) throws(SnapshotError) {
        let settings = try Settings(state.settings)
        _ = try settings.bodies(data: state.data)
    }

    public func restore(_ state: OriginState) {
        // `check` accepted these settings; read again, they give the same values.
        guard let settings = try? Settings(state.settings), let bodies = try? settings.bodies(data: state.data) else {
            preconditionFailure("restore of settings check refused")
        }
        data = state.data; modifiedAt = state.modifiedAt; latency = settings.latency
        latencies = settings.latencies; isOnline = settings.isOnline; idField = settings.idField
        failNext = settings.failNext; failKey = settings.failKey
        versions = settings.versions
        headers = state.headers
        self.bodies = bodies
        appliedKeys = AppliedKeys(settings.appliedKeys)
        scripted = settings.scripted; scriptedValidations = settings.scriptedValidations; strict = settings.strict
        divergence = nil
    }

    /// The server's settings in a snapshot's `server` section (SPEC §5.2), checked.
    private struct Settings {
        var latency: Int64, latencies: [String: Int64], isOnline: Bool, idField: String, failNext: Int, failKey: [String: Int]
        /// The keys' versions (`versions`), the kind of each key's text or binary body
        /// (`bodies`: its data is the body's entry value), the idempotency keys applied, oldest
        /// first (`idempotency_keys`): each absent when empty.
        var versions: [String: UInt64] = [:], bodyKinds: [String: String] = [:], appliedKeys: [IdempotencyKey] = []
        /// The answers queued by `server next`, by key and for validations, and strict mode
        /// (`next`, `next_validations`, `strict`): each absent when empty or off.
        var scripted: [String: [ScriptedAnswer]] = [:], scriptedValidations: [ScriptedAnswer] = [], strict = false

        init(_ fields: [String: JSONValue]) throws(SnapshotError) {
            let r = OriginSettingsReader(fields)
            try r.only(["latency_ms", "latencies_ms", "online", "id_field", "fail_next", "fail_keys",
                        "versions", "bodies", "idempotency_keys", "next", "next_validations", "strict"])
            latencies = try r.durationsByKey("latencies_ms")
            failKey = try r.countsByKey("fail_keys")
            latency = try r.duration("latency_ms")
            idField = try r.string("id_field")
            if idField.isEmpty { throw r.fail("id_field", "must not be empty") }
            isOnline = try r.bool("online")
            failNext = try r.count("fail_next")
            if r.has("versions") { versions = try r.versionsByKey("versions") }
            if r.has("bodies") { bodyKinds = try r.wordsByKey("bodies", allowed: ["text", "binary"]) }
            if r.has("idempotency_keys") {
                let pairs = try r.pairs("idempotency_keys", limits: (Int64(Int32.max), 1 << 53), maxCount: AppliedKeys.limit)
                appliedKeys = pairs.map { IdempotencyKey(client: Int($0.0), mutation: UInt64($0.1)) }
                if Set(appliedKeys).count != appliedKeys.count { throw r.fail("idempotency_keys", "a key is listed twice") }
            }
            if r.has("next") {
                for (key, items) in try r.objectListsByKey("next") {
                    var answers: [ScriptedAnswer] = []
                    for item in items { answers.append(try ScriptedAnswer(item, validation: false)) }
                    scripted[key] = answers
                }
            }
            if r.has("next_validations") {
                for item in try r.objects("next_validations") { scriptedValidations.append(try ScriptedAnswer(item, validation: true)) }
            }
            if r.has("strict") { strict = try r.bool("strict") }
        }

        /// Each key's text or binary body, from its kind and its data.
        /// - Throws: `server.bodies.KEY: ...` for a key without data, or whose data is not such a body.
        func bodies(data: [String: JSONValue]) throws(SnapshotError) -> [String: HTTPBody] {
            var out: [String: HTTPBody] = [:]
            for (key, kind) in bodyKinds.sorted(by: { $0.key < $1.key }) {
                let path = "server.bodies.\(key)"
                guard let value = data[key] else { throw SnapshotError(path: path, "the key has no data (server.data)") }
                do { out[key] = try HTTPBody.fromEntryValue(value, kind: kind) } catch { throw SnapshotError(path: path, error.message) }
            }
            return out
        }
    }

    public func startTrackingChanges() { changedKeys = [] }

    public func takeChangedKeys() -> [String] {
        guard let keys = changedKeys else { return [] }
        changedKeys = []
        return keys.sorted()
    }

    public func allKeys() -> [String] { Set(data.keys).union(modifiedAt.keys).sorted() }

    public func storedKey(_ key: String) -> StoredServerKey {
        StoredServerKey(key: key, value: data[key]?.compactText, modifiedAt: modifiedAt[key],
                        headers: headers[key].map(\.json.compactText))
    }

    // MARK: Origin

    /// Decides, when a request is sent, whether it fails; consumes the failure budget it uses.
    func takeFailure(for keys: [String]) -> Bool {
        if failNext > 0 {
            failNext -= 1
            return true
        }
        var failed = false
        for key in keys {
            if let n = failKey[key], n > 0 {
                failed = true
                if n == 1 { failKey.removeValue(forKey: key) } else { failKey[key] = n - 1 }
            }
        }
        return failed
    }

    func latency(for keys: [String]) -> Int64 {
        keys.map { latencies[$0] ?? latency }.max() ?? latency
    }

    public func fetch(keys: [String], requestID: UInt64, at now: Int64) -> OriginReply<[KeyAnswer]> {
        if let reply = scriptedReply(.fetch, keys: keys) { return reply }
        let ms = latency(for: keys)
        if takeFailure(for: keys) { return .after(latencyMs: ms, .failure(OriginFailure("server error"))) }
        return .after(latencyMs: ms, .success(keys.map(answerFromData)))
    }

    public func mutate(_ request: MutationRequest, requestID: UInt64, at now: Int64) -> OriginReply<[KeyAnswer]> {
        if let reply = scriptedReply(.mutate, keys: request.keys, commit: { _ = apply(request, at: now) }) { return reply }
        let ms = latency(for: request.keys)
        if takeFailure(for: request.keys) { return .after(latencyMs: ms, .failure(OriginFailure("server error"))) }
        if let failure = apply(request, at: now) { return .after(latencyMs: ms, .failure(failure)) }
        return .after(latencyMs: ms, .success(request.keys.map(answerFromData)))
    }

    /// Applies a mutation to the data, all or nothing; one whose idempotency key was applied
    /// already changes nothing (its answer is then the data's, as for the first).
    /// - Returns: why it could not be applied (`not found`, `rejected: ...`); nil when it was.
    private func apply(_ request: MutationRequest, at now: Int64) -> OriginFailure? {
        if let key = request.idempotencyKey, appliedKeys.contains(key) { return nil }
        do {
            if let id = request.entityID {
                for (key, value) in try patchedEntities(id, request.patch) { set(key, value, at: now) }
            } else {
                guard let key = request.keys.first, let value = try patched(key, request.patch) else {
                    return OriginFailure("not found")
                }
                set(key, value, at: now)
            }
        } catch {
            return OriginFailure("rejected: \(error)")
        }
        if let key = request.idempotencyKey { appliedKeys.insert(key) }
        return nil
    }

    public func validate(_ request: [String: Int64], items: Bool, requestID: UInt64, at now: Int64) -> OriginReply<[String: NamespaceVerdict]> {
        if let reply = scriptedValidation(request, items: items) { return reply }
        if takeFailure(for: []) { return .after(latencyMs: latency, .failure(OriginFailure("server error"))) }
        return .after(latencyMs: latency, .success(verdicts(for: request, items: items)))
    }

    /// The answer to a validation request from the data: for each namespace, whether a key of it
    /// changed at or after the time given, with the changed keys' values when `items`.
    func verdicts(for request: [String: Int64], items: Bool) -> [String: NamespaceVerdict] {
        var verdicts: [String: NamespaceVerdict] = [:]
        for (namespace, since) in request {
            var changed: [String: JSONValue] = [:]
            var invalidate = false
            for (key, time) in modifiedAt where time >= since && KeyName.namespace(of: key) == namespace {
                invalidate = true
                if let value = data[key] { changed[key] = value }
            }
            verdicts[namespace] = NamespaceVerdict(invalidate: invalidate, items: items ? changed : nil)
        }
        return verdicts
    }
}

/// The idempotency keys a server remembers: the newest ``limit`` applied (SPEC §7.1), as a real
/// server keeps its keys for a while and not forever; a retry of a key forgotten is applied
/// again. So the memory does not grow with the length of a run.
struct AppliedKeys {
    static let limit = 65_536
    private var keys: Set<IdempotencyKey> = []
    /// The keys in the order they were applied; the remembered ones are `order[oldest...]`.
    private var order: [IdempotencyKey] = []
    private var oldest = 0

    init() {}

    /// The keys `keys` lists, oldest first (as `inOrder` gives them; at most `limit`, none twice).
    init(_ keys: [IdempotencyKey]) {
        self.keys = Set(keys)
        order = keys
    }

    func contains(_ key: IdempotencyKey) -> Bool { keys.contains(key) }
    var isEmpty: Bool { keys.isEmpty }
    /// The keys remembered, oldest first.
    var inOrder: ArraySlice<IdempotencyKey> { order[oldest...] }

    /// - Complexity: O(1) amortized.
    mutating func insert(_ key: IdempotencyKey) {
        guard keys.insert(key).inserted else { return }
        order.append(key)
        if keys.count > Self.limit {
            keys.remove(order[oldest])
            oldest += 1
            if oldest >= order.count / 2 {
                order.removeFirst(oldest)
                oldest = 0
            }
        }
    }
}
