/// A cached entry, stored in a slot of the `OrderedSlots` (inside the engine's `EntryTable`), which
/// also links it into two recency lists (global and per namespace) by slot index.
///
/// What a read needs (key, value, state flags, namespace, times) comes first, so a read of a
/// cached entry touches as few cache lines as it can. What only some entries have (tags, the
/// sequence numbers of the last local write and put when they are not the stored request's, an
/// `expire in=` item's, a mutation log) lives out of line in `cold`, which most entries do not
/// have: 96 bytes a record, a value of up to 31 bytes of text included (`StoredValue.Inline`).
///
/// The record keeps no generation: what tells an expiry record or an `expire in=` item of this
/// slot's current store from an older one is `storedSeq`, which each store takes afresh. Nor
/// does it keep its key's hash: removing an entry hashes its key again (`EntryTable.remove`).
///
/// To hold such a value in the record and stay at 96 bytes, the fields are packed (in the order
/// declared, which is the order in memory): the stale and expiry times are kept as 32-bit
/// offsets from `storedAt` (up to some 49 days; `Int64.max` has a mark of its own), the sequence
/// number of the store as an offset from the stored request's, and the namespace slot in 16 bits.
/// A value that does not fit (a time before `storedAt` or far past it, a namespace slot of 65,535
/// or more) is kept in `cold` instead, its field marked so; the properties read and write the
/// whole values either way.
struct Entry {
    var key: String
    /// The value, as canonical compact text. Changed only through `EntryTable.setValue` (the id
    /// index follows it).
    var stored: StoredValue
    private var flags: Flags
    /// The namespace slot, or `UInt16.max` when it is in `cold`.
    private var namespaceBits: UInt16
    /// `staleAt - storedAt`, or `Self.never` (`Int64.max`) or `Self.outOfLine` (in `cold`).
    private var staleOffset: UInt32
    private var storedAtValue: Int64
    /// Recency stamp: larger is more recent (the order of the recency lists, kept by a store).
    var recency: UInt64 = 0
    private var storedRequestValue: UInt64 = 0
    /// The fields few entries need, out of line; nil when each has its usual value (see `Cold`).
    private var cold: Cold?
    /// `expiresAt - storedAt`, or `Self.never` or `Self.outOfLine`.
    private var expiryOffset: UInt32
    /// `storedSeq - storedRequest`, or `Self.outOfLine`.
    private var storedSeqOffset: UInt32 = 0

    init(key: String, namespace: Int32, stored: StoredValue, tags: [String],
         storedAt: Int64, staleAt: Int64, expiresAt: Int64) {
        self.key = key
        self.stored = stored
        self.flags = .live
        self.namespaceBits = 0
        self.storedAtValue = storedAt
        self.staleOffset = 0
        self.expiryOffset = 0
        self.namespace = namespace
        self.staleAt = staleAt
        self.expiresAt = expiresAt
        if !tags.isEmpty { self.tags = tags }
    }

    /// The entry a `put` of sequence number `put` stores, `storedSeq` its store's: as
    /// `init(key:namespace:stored:tags:storedAt:staleAt:expiresAt:)` followed by `notePut(put)`
    /// and `storedSeq = storedSeq`, its fields written straight when they fit in the record (the
    /// namespace slot in 16 bits, the times and the store's sequence number as offsets, no tags:
    /// every put of the usual kind), with none of the setters' checks for fields out of line,
    /// which a new record has none of.
    @inline(__always)
    static func stored(byPut put: UInt64, storedSeq: UInt64, key: String, namespace: Int32, stored: StoredValue,
                       tags: [String], storedAt: Int64, staleAt: Int64, expiresAt: Int64) -> Entry {
        if tags.isEmpty, namespace >= 0 && namespace < Int32(UInt16.max),
           storedSeq >= put && storedSeq - put < UInt64(outOfLine),
           let stale = offset(of: staleAt, after: storedAt), let expiry = offset(of: expiresAt, after: storedAt) {
            return Entry(key: key, namespaceBits: UInt16(truncatingIfNeeded: namespace), stored: stored,
                         storedAt: storedAt, staleOffset: stale, expiryOffset: expiry, put: put,
                         storedSeqOffset: UInt32(truncatingIfNeeded: storedSeq - put))
        }
        var entry = Entry(key: key, namespace: namespace, stored: stored, tags: tags,
                          storedAt: storedAt, staleAt: staleAt, expiresAt: expiresAt)
        entry.notePut(put)
        entry.storedSeq = storedSeq
        return entry
    }

    /// A put of sequence number `put` stores `stored` again in this live entry, `storedSeq` its
    /// store's, at `storedAt` with the times given: what `stored = stored`, `notePut(put)`,
    /// `invalidated = false`, `restamp(at:)`, `storedSeq = storedSeq` and `applyTimes` leave,
    /// each field written straight. Only for an entry with nothing out of line (no tags, mutation
    /// log, version, `expire in=` item, writes or times apart: `cold` is nil) whose new times
    /// and sequence number fit in the record (every put again of the usual kind).
    /// - Returns: false, with nothing changed, for any other entry (the caller takes the steps
    ///   one by one).
    @inline(__always)
    mutating func storeAgain(byPut put: UInt64, storedSeq: UInt64, stored: StoredValue, storedAt: Int64,
                             staleAt: Int64, expiresAt: Int64) -> Bool {
        guard hasNothingOutOfLine, storedSeq >= put && storedSeq - put < UInt64(Self.outOfLine),
              let stale = Self.offset(of: staleAt, after: storedAt),
              let expiry = Self.offset(of: expiresAt, after: storedAt) else { return false }
        self.stored = stored
        flags.remove([.invalidated, .expiryOverridden, .expiryReported, .writesCold])
        flags.insert(.writesAtRequest)
        storedAtValue = storedAt
        staleOffset = stale
        expiryOffset = expiry
        storedRequestValue = put
        storedSeqOffset = UInt32(truncatingIfNeeded: storedSeq - put)
        return true
    }

    /// Whether no field of the entry is kept out of line (no record apart: no tags, mutation log,
    /// version, `expire in=` item, writes or times apart).
    var hasNothingOutOfLine: Bool {
        @inline(__always) get { cold == nil }
    }

    /// A put's entry with every field in the record (see `stored(byPut:...)`).
    @inline(__always)
    private init(key: String, namespaceBits: UInt16, stored: StoredValue, storedAt: Int64, staleOffset: UInt32,
                 expiryOffset: UInt32, put: UInt64, storedSeqOffset: UInt32) {
        self.key = key
        self.stored = stored
        self.flags = [.live, .writesAtRequest]
        self.namespaceBits = namespaceBits
        self.staleOffset = staleOffset
        self.storedAtValue = storedAt
        self.storedRequestValue = put
        self.expiryOffset = expiryOffset
        self.storedSeqOffset = storedSeqOffset
    }

    /// An entry of `value`; `ids` is not kept (the table reads an entry's ids off its value).
    init(key: String, namespace: Int32, value: JSONValue, tags: [String], ids: [String] = [],
         storedAt: Int64, staleAt: Int64, expiresAt: Int64) {
        self.init(key: key, namespace: namespace, stored: StoredValue(value), tags: tags,
                  storedAt: storedAt, staleAt: staleAt, expiresAt: expiresAt)
    }

    // MARK: Packed fields

    /// An offset marking a time of `Int64.max` (no stale threshold, no expiry).
    private static let never = UInt32.max
    /// An offset marking a field kept in `cold`.
    private static let outOfLine = UInt32.max - 1

    /// The time `offset` after `base`, `Int64.max` for `never`, nil for `outOfLine`.
    @inline(__always)
    private static func time(_ offset: UInt32, after base: Int64) -> Int64? {
        if offset < outOfLine { return base &+ Int64(offset) }
        return offset == never ? .max : nil
    }

    /// The offset of `time` after `base`, or nil when it has none (before `base`, or too far past).
    @inline(__always)
    private static func offset(of time: Int64, after base: Int64) -> UInt32? {
        if time == .max { return never }
        let (d, overflow) = time.subtractingReportingOverflow(base)
        guard !overflow, d >= 0, d < Int64(outOfLine) else { return nil }
        return UInt32(d)
    }

    var namespace: Int32 {
        @inline(__always) get { namespaceBits != .max ? Int32(namespaceBits) : cold!.namespace }
        set {
            if newValue >= 0 && newValue < Int32(UInt16.max) {
                let wasOut = namespaceBits == .max
                namespaceBits = UInt16(newValue)
                if wasOut { dropColdIfUnused() }
            } else {
                uniqueCold().namespace = newValue
                namespaceBits = .max
            }
        }
    }

    var storedAt: Int64 {
        @inline(__always) get { storedAtValue }
    }

    /// Sets `storedAt` for a new store, whose stale and expiry times the caller sets next
    /// (`applyTimes`); until then they read as `time`. (Keeping the old times instead would take
    /// them out of line for a moment, as they are before the new `storedAt`.)
    mutating func restamp(at time: Int64) {
        let wasOut = staleOffset == Self.outOfLine || expiryOffset == Self.outOfLine
        storedAtValue = time
        staleOffset = 0
        expiryOffset = 0
        if wasOut { dropColdIfUnused() }
    }

    /// `Int64.max` when the namespace has no stale threshold.
    var staleAt: Int64 {
        @inline(__always) get { Self.time(staleOffset, after: storedAtValue) ?? cold!.staleAt }
        set {
            if let offset = Self.offset(of: newValue, after: storedAtValue) {
                let wasOut = staleOffset == Self.outOfLine
                staleOffset = offset
                if wasOut { dropColdIfUnused() }
            } else {
                uniqueCold().staleAt = newValue
                staleOffset = Self.outOfLine
            }
        }
    }

    var expiresAt: Int64 {
        @inline(__always) get { Self.time(expiryOffset, after: storedAtValue) ?? cold!.expiresAt }
        set {
            if let offset = Self.offset(of: newValue, after: storedAtValue) {
                let wasOut = expiryOffset == Self.outOfLine
                expiryOffset = offset
                if wasOut { dropColdIfUnused() }
            } else {
                uniqueCold().expiresAt = newValue
                expiryOffset = Self.outOfLine
            }
        }
    }

    /// Sequence number of the store that set `storedAt`: orders expiries due at the same instant.
    var storedSeq: UInt64 {
        @inline(__always) get {
            storedSeqOffset != Self.outOfLine ? storedRequestValue &+ UInt64(storedSeqOffset) : cold!.storedSeq
        }
        set {
            let wasOut = storedSeqOffset == Self.outOfLine
            if newValue >= storedRequestValue && newValue - storedRequestValue < UInt64(Self.outOfLine) {
                storedSeqOffset = UInt32(newValue - storedRequestValue)
                if wasOut { dropColdIfUnused() }
            } else {
                uniqueCold().storedSeq = newValue
                storedSeqOffset = Self.outOfLine
            }
        }
    }

    /// Sets the stored request's and the store's sequence numbers at once (with no moment where
    /// the second is before the first, which would take a record out of line).
    mutating func setSequence(storedRequest: UInt64, storedSeq: UInt64) {
        let (local, put) = (lastLocalWrite, lastPut)
        let wasOut = storedSeqOffset == Self.outOfLine
        storedRequestValue = storedRequest
        if storedSeq >= storedRequest && storedSeq - storedRequest < UInt64(Self.outOfLine) {
            storedSeqOffset = UInt32(storedSeq - storedRequest)
        } else {
            uniqueCold().storedSeq = storedSeq
            storedSeqOffset = Self.outOfLine
        }
        setWrites(local: local, put: put)
        if wasOut { dropColdIfUnused() }
    }

    /// The value as a tree, parsed from its text (for patches, snapshots and `explain`).
    /// - Complexity: O(size of the value).
    var value: JSONValue { stored.json }

    // MARK: Flags

    private struct Flags: OptionSet {
        let rawValue: UInt8
        static let live = Flags(rawValue: 1 << 0)
        static let invalidated = Flags(rawValue: 1 << 1)
        static let expiryOverridden = Flags(rawValue: 1 << 2)
        static let expiryReported = Flags(rawValue: 1 << 3)
        static let marked = Flags(rawValue: 1 << 4)
        /// `lastLocalWrite` and `lastPut` both equal `storedRequest` (a put stored the value).
        static let writesAtRequest = Flags(rawValue: 1 << 5)
        /// `lastLocalWrite` and `lastPut` are in `cold`. With neither bit, both are 0.
        static let writesCold = Flags(rawValue: 1 << 6)
        /// The entry has tags, in `cold`.
        static let tagged = Flags(rawValue: 1 << 7)
    }

    @inline(__always)
    private mutating func set(_ flag: Flags, _ on: Bool) {
        if on { flags.insert(flag) } else { flags.remove(flag) }
    }

    /// In use; a free slot holds a dead entry until it is reused.
    var live: Bool {
        @inline(__always) get { flags.contains(.live) }
        set { set(.live, newValue) }
    }
    var invalidated: Bool {
        @inline(__always) get { flags.contains(.invalidated) }
        set { set(.invalidated, newValue) }
    }
    /// `expire` set `expiresAt` by hand; `ns` recomputation drops that.
    var expiryOverridden: Bool {
        @inline(__always) get { flags.contains(.expiryOverridden) }
        set { set(.expiryOverridden, newValue) }
    }
    /// The expiry has been counted and reported; reset by a new store.
    var expiryReported: Bool {
        @inline(__always) get { flags.contains(.expiryReported) }
        set { set(.expiryReported, newValue) }
    }
    /// Written to since a store last took the changes (see `EntrySlots`).
    var marked: Bool {
        @inline(__always) get { flags.contains(.marked) }
        set { set(.marked, newValue) }
    }

    // MARK: Sequence numbers of writes

    /// Sequence number of the request (or put) whose value is stored now — B12. (`storedSeq`
    /// stays what it was.)
    var storedRequest: UInt64 {
        @inline(__always) get { storedRequestValue }
        set {
            guard newValue != storedRequestValue else { return }
            setSequence(storedRequest: newValue, storedSeq: storedSeq)
        }
    }

    /// Sequence number of the last local write (`put` or event) — B12.
    var lastLocalWrite: UInt64 {
        get {
            if flags.contains(.writesAtRequest) { return storedRequestValue }
            return flags.contains(.writesCold) ? cold!.lastLocalWrite : 0
        }
        set { setWrites(local: newValue, put: lastPut) }
    }

    /// Sequence number of the last `put` (while mutations are pending, events join the log instead of discarding).
    var lastPut: UInt64 {
        get {
            if flags.contains(.writesAtRequest) { return storedRequestValue }
            return flags.contains(.writesCold) ? cold!.lastPut : 0
        }
        set { setWrites(local: lastLocalWrite, put: newValue) }
    }

    /// A put of sequence number `seq` stored the value: it is the stored request, the last local
    /// write and the last put (without the record out of line this takes otherwise). `storedSeq`
    /// becomes `seq` too, until the caller sets it (as every put does, just after).
    mutating func notePut(_ seq: UInt64) {
        storedRequestValue = seq
        if storedSeqOffset == Self.outOfLine {
            storedSeqOffset = 0
            dropColdIfUnused()
        } else {
            storedSeqOffset = 0
        }
        setWrites(local: seq, put: seq)
    }

    /// Sets `lastLocalWrite` and `lastPut` at once, in the form that needs no record out of line
    /// when there is one (setting them one by one may make one for a moment).
    mutating func setWrites(local: UInt64, put: UInt64) {
        flags.remove([.writesAtRequest, .writesCold])
        if local == 0 && put == 0 {
        } else if local == storedRequestValue && put == storedRequestValue {
            flags.insert(.writesAtRequest)
        } else {
            let c = uniqueCold()
            c.lastLocalWrite = local
            c.lastPut = put
            flags.insert(.writesCold)
            return
        }
        dropColdIfUnused()
    }

    /// The entry's tags (in `cold`, as few entries have any).
    var tags: [String] {
        get { flags.contains(.tagged) ? cold!.tags : [] }
        set {
            if newValue.isEmpty {
                guard flags.contains(.tagged) else { return }
                flags.remove(.tagged)
                uniqueCold().tags = []
                dropColdIfUnused()
            } else {
                uniqueCold().tags = newValue
                flags.insert(.tagged)
            }
        }
    }

    /// Sequence number of the scheduler item that reports an `expire in=` override (orders it among items due then).
    var expirySeq: UInt64 {
        get { cold?.expirySeq ?? 0 }
        set {
            if newValue == 0 && cold == nil { return }
            uniqueCold().expirySeq = newValue
            dropColdIfUnused()
        }
    }

    /// Pending optimistic mutations: the confirmed base plus a log (B11).
    var log: MutationLog? {
        get { cold?.log }
        set {
            if newValue == nil && cold == nil { return }
            uniqueCold().log = newValue
            dropColdIfUnused()
        }
    }

    /// The server version the value reflects (SPEC §1.1 Versions): set by a versioned answer or
    /// event, nil when none gave one (then every event applies).
    var version: UInt64? {
        get { cold?.version }
        set {
            if newValue == nil && cold == nil { return }
            uniqueCold().version = newValue
            dropColdIfUnused()
        }
    }

    /// Whether the record out of line holds nothing but usual values (the invariant is that it then is nil).
    var hasIdleColdRecord: Bool {
        guard let cold else { return false }
        return !flags.contains(.writesCold) && !flags.contains(.tagged) && cold.expirySeq == 0 && cold.log == nil
            && cold.version == nil && namespaceBits != .max && staleOffset != Self.outOfLine
            && expiryOffset != Self.outOfLine && storedSeqOffset != Self.outOfLine
    }

    /// The fields out of line. A class so that an entry without them pays one pointer; copied on
    /// write, so `Entry` keeps value semantics (a copy of an entry never sees another's writes).
    private final class Cold {
        /// Meaningful only with `Flags.writesCold`.
        var lastLocalWrite: UInt64 = 0
        var lastPut: UInt64 = 0
        var expirySeq: UInt64 = 0
        var log: MutationLog?
        var version: UInt64?
        /// Meaningful only with `Flags.tagged`.
        var tags: [String] = []
        /// Each meaningful only when the entry's packed field is marked out of line.
        var namespace: Int32 = 0
        var staleAt: Int64 = 0
        var expiresAt: Int64 = 0
        var storedSeq: UInt64 = 0

        func copy() -> Cold {
            let c = Cold()
            c.tags = tags
            c.namespace = namespace
            c.staleAt = staleAt
            c.expiresAt = expiresAt
            c.storedSeq = storedSeq
            c.lastLocalWrite = lastLocalWrite
            c.lastPut = lastPut
            c.expirySeq = expirySeq
            c.log = log
            c.version = version
            return c
        }
    }

    private mutating func uniqueCold() -> Cold {
        if cold == nil {
            cold = Cold()
        } else if !isKnownUniquelyReferenced(&cold!) {
            cold = cold!.copy()
        }
        return cold!
    }

    /// The key, moved out: the entry is left with an empty one (for an entry being removed).
    @inline(__always)
    mutating func takeKey() -> String {
        var taken = ""
        swap(&taken, &key)
        return taken
    }

    /// Drops what a dead entry does not need: its value, tags and out-of-line fields (its packed
    /// fields that were out of line read as 0 from now on).
    mutating func releaseContents() {
        stored = .null
        cold = nil
        flags.remove([.writesAtRequest, .writesCold, .tagged])
        if namespaceBits == .max { namespaceBits = 0 }
        if staleOffset == Self.outOfLine { staleOffset = 0 }
        if expiryOffset == Self.outOfLine { expiryOffset = 0 }
        if storedSeqOffset == Self.outOfLine { storedSeqOffset = 0 }
    }

    private mutating func dropColdIfUnused() {
        if hasIdleColdRecord { cold = nil }
    }

    // MARK: A store's row

    /// Whether nothing of the entry is out of line (no tags, mutation log, version, `expire in=`
    /// item, writes or times apart) and none of the flags a store row's `extra` holds is set
    /// (invalidated, expiry counted or overridden): its row is its key, value and numbers, and
    /// its `extra` holds only what its namespace adds (an eviction rank, HTTP responses).
    var rowIsPlain: Bool {
        @inline(__always) get { cold == nil && flags.isDisjoint(with: [.invalidated, .expiryOverridden, .expiryReported]) }
    }

    /// Writes the mask and integers of the `fields` of a row that `rowIsPlain` (no tags, no
    /// extra) at `out` (room for `EntryRowFields.maxNumberBytes`), read straight from the packed
    /// fields: with nothing out of line, each offset is one in line or `never`.
    /// - Returns: the bytes written.
    @inline(__always)
    func writePlainRowNumbers(into out: UnsafeMutablePointer<UInt8>) -> Int {
        let writes = flags.contains(.writesAtRequest) ? storedRequestValue : 0
        return EntryRowFields.writeNumbers(
            storedAt: storedAtValue,
            staleAt: staleOffset == Self.never ? nil : storedAtValue &+ Int64(staleOffset),
            expiresAt: expiryOffset == Self.never ? nil : storedAtValue &+ Int64(expiryOffset),
            seq: Int64(bitPattern: storedRequestValue &+ UInt64(storedSeqOffset)),
            storedRequest: Int64(bitPattern: storedRequestValue),
            lastWrite: Int64(bitPattern: writes), lastPut: Int64(bitPattern: writes),
            tags: false, extra: false, into: out)
    }

    // MARK: State

    // Inlined: a call took a copy of the whole record to pass it (a `get` hit's state, some 35
    // instructions with the call).
    @inline(__always)
    func state(at now: Int64) -> EntryState {
        if now >= expiresAt { return .expired }
        if invalidated || now >= staleAt { return .stale }
        return .fresh
    }

    /// What a read of this entry returns at `now` (`pending` left false for the caller to set).
    func readResult(at now: Int64, source: ValueSource) -> ReadResult {
        ReadResult(key: key, state: state(at: now), stored: stored, ageMs: now - storedAt,
                   expiresInMs: expiresAt == .max ? .max : expiresAt - now, source: source, extras: readExtras)
    }

    /// A read's `ReadResult.extras`: the tags, when the entry has any, else nil (no array).
    var readExtras: ReadResult.Extras? {
        @inline(__always) get { flags.contains(.tagged) ? ReadResult.Extras.make(tags: cold!.tags, error: nil) : nil }
    }

    /// Derives the stale and expiry times from `storedAt` and `policy`, dropping an `expire`
    /// override and a reported expiry.
    /// - Returns: the record that queues the expiry of the entry in `slot`.
    mutating func applyTimes(_ policy: Policy, slot: Int32) -> ExpiryRecord {
        staleAt = policy.stale.map { storedAt.addingClamped($0) } ?? .max
        expiresAt = storedAt.addingClamped(policy.ttl)
        expiryOverridden = false
        expiryReported = false
        return ExpiryRecord(slot: slot, seq: storedSeq)
    }
}

/// An entry with mutations in flight: its confirmed base plus pending mutations and realtime
/// patches in arrival order (SPEC §1.1, B11).
struct MutationLog {
    struct Item {
        /// Sequence number at which it was applied locally.
        var seq: UInt64
        var patch: Patch
        var entityID: String?
        /// The mutation it belongs to; nil for a realtime event.
        var mutation: UInt64?
        /// When it reached the server: an event's own seq, a mutation's request seq; nil while queued.
        var reachedServer: UInt64?
        /// The value shown just before the mutation was applied: kept only when its namespace has
        /// `rollback-to-snapshot` on, for the naive rollback.
        var before: JSONValue? = nil
        /// Not applied any more: a naive rollback put back the value shown before an earlier
        /// mutation, dropping this one's effect; it is kept for its own answer (and rollback).
        var inert = false
        /// A versioned event's version: an answer at that version or newer already has it.
        var version: UInt64? = nil
    }
    var base: JSONValue
    /// Sequence number of the request (or put) whose value is the base.
    var baseSeq: UInt64
    var items: [Item] = []
    /// Mutations of this entry not yet answered (sent or queued).
    var pending: Set<UInt64> = []

    /// A new base at server `version` (nil: none given): the items it already has, the events of
    /// that version or older, leave the log (unless `inOrder`, the naive switch that compares no
    /// versions). - Returns: the entry's version: the newest of the base's and the items'.
    mutating func rebase(version: UInt64?, inOrder: Bool) -> UInt64? {
        if let version, !inOrder { items.removeAll { $0.mutation == nil && ($0.version ?? .max) <= version } }
        return items.reduce(version) { newest, item in
            guard let v = item.version else { return newest }
            return max(newest ?? 0, v)
        }
    }
}
