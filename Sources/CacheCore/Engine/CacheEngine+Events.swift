// Realtime events (B8): patches of cached values the server pushes, by key or by entity id.

extension CacheEngine {
    /// A realtime change of one key (B8): patches the cached value without a refetch.
    /// With `own`, the event is this client's own echo: skipped, observers see `skipped`. With
    /// `version`, the server version it reflects: an entry already at that version or newer skips
    /// it, and an applied one leaves the entry at it (SPEC §1.1 Versions). The naive switch
    /// `events-in-arrival-order` applies both.
    /// - Throws: `CacheError` when the patch does not apply; nothing changes.
    /// - Returns: the keys changed.
    @discardableResult
    public func event(_ key: String, patch: Patch, own: Bool = false, version: UInt64? = nil) throws(CacheError) -> [String] {
        defer { if checksInvariants { checkInvariants() } }
        if let version, version > KeyAnswer.maxVersion {
            throw CacheError("version \(version) is past the largest, \(KeyAnswer.maxVersion) (2^53)")
        }
        let key = KeyName.canonical(key)
        guard let slot = entrySlot(forKey: key) else {
            // Not cached yet: the answer of a first fetch in flight predates the event (SPEC §1.1).
            if !own && requestTable.fetch(forKey: key) != nil && !isNaive(.lastAnswerWins, key: key) {
                requestTable.markInvalidated(key)
            }
            return []
        }
        let value: JSONValue
        do { value = try patch.apply(to: slots[Int(slot)].value) } catch { throw CacheError("\(error)") }
        // Not newer than the version the entry holds: the value has it already.
        let notNewer = version.map { v in slots[Int(slot)].version.map { v <= $0 } ?? false } ?? false
        if !isNaive(.eventsInArrivalOrder, ns: slots[Int(slot)].namespace) && (own || notNewer) {
            emit(.skipped, slot: slot, source: .server)
            return []
        }
        applyEvent([(slot, value)], patch: patch, entityID: nil, version: version)
        return [key]
    }

    /// Whether `event(key, patch:version:)` would apply here: throws the error it would throw,
    /// changing nothing (an event reaching several clients is checked on each first, SPEC §3
    /// Clients).
    public func checkEvent(_ key: String, patch: Patch, version: UInt64?) throws(CacheError) {
        if let version, version > KeyAnswer.maxVersion {
            throw CacheError("version \(version) is past the largest, \(KeyAnswer.maxVersion) (2^53)")
        }
        guard let slot = entrySlot(forKey: KeyName.canonical(key)) else { return }
        do { _ = try patch.apply(to: slots[Int(slot)].value) } catch { throw CacheError("\(error)") }
    }

    /// Whether `event(entity:patch:)` would apply here: throws the error it would throw, changing nothing.
    public func checkEvent(entity id: String, patch: Patch) throws(CacheError) {
        for slot in sortedByKey(entries.slots(embedding: id)) {
            do { _ = try slots[Int(slot)].value.patchingEntities(id: id, idField: idField, with: patch) } catch {
                throw CacheError("\(error) (in \(slots[Int(slot)].key))")
            }
        }
    }

    /// A realtime change of entity `id` in every cached value embedding it (B8).
    /// - Complexity: O(entries embedding the id · their size), through the id index; never a scan.
    @discardableResult
    public func event(entity id: String, patch: Patch, own: Bool = false) throws(CacheError) -> [String] {
        defer { if checksInvariants { checkInvariants() } }
        let targets = sortedByKey(entries.slots(embedding: id))
        var changes: [(Int32, JSONValue)] = []
        for slot in targets {
            do {
                let (value, _) = try slots[Int(slot)].value.patchingEntities(id: id, idField: idField, with: patch)
                changes.append((slot, value))
            } catch {
                throw CacheError("\(error) (in \(slots[Int(slot)].key))")
            }
        }
        if own {
            // The echo of this client's own change is skipped, but where a namespace applies
            // events in arrival order (a naive switch, SPEC §1.2): there it lands like any event.
            var applied: [(Int32, JSONValue)] = []
            for (slot, value) in changes {
                if isNaive(.eventsInArrivalOrder, ns: slots[Int(slot)].namespace) {
                    applied.append((slot, value))
                } else {
                    emit(.skipped, slot: slot, source: .server)
                }
            }
            guard !applied.isEmpty else { return [] }
            applyEvent(applied, patch: patch, entityID: id)
            return applied.map { slots[Int($0.0)].key }
        }
        invalidateAnswersInFlight(embedding: id, except: Set(changes.map { $0.0 }))
        applyEvent(changes, patch: patch, entityID: id)
        return changes.map { slots[Int($0.0)].key }
    }

    /// Notes entity `id` on the fetches in flight of the keys the event could not patch: a first
    /// fetch's, or a refresh of an entry (not in `patched`) that did not embed it yet. An answer
    /// that embeds it is stored stale (SPEC §1.1, events during a fetch).
    /// - Complexity: O(r log r + keys in flight).
    private func invalidateAnswersInFlight(embedding id: String, except patched: Set<Int32>) {
        guard !requestTable.isEmpty else { return }
        requestTable.noteEntityEvent(id) { key in
            if let slot = entrySlot(forKey: key), patched.contains(slot) { return false }
            return !isNaive(.lastAnswerWins, key: key)
        }
    }

    private func applyEvent(_ changes: [(Int32, JSONValue)], patch: Patch, entityID: String?, version: UInt64? = nil) {
        let s = nextSeq()
        for (slot, value) in changes {
            let i = Int(slot)
            if var log = slots[i].log {
                log.items.append(.init(seq: s, patch: patch, entityID: entityID, mutation: nil, reachedServer: s,
                                       version: version))
                slots[i].log = log
            }
            if let version { slots[i].version = max(slots[i].version ?? 0, version) }
            slots[i].lastLocalWrite = s
            entries.setValue(slot, value)
            emit(.patched, slot: slot, source: .server)
        }
    }
}
