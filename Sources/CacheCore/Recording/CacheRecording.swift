/// What a `Cache` did while it recorded (`Cache.startRecording`): its state when the recording
/// began, then every call, scheduling step, request, answer and observer event, in the order they
/// happened. CacheShell writes it as a transcript that replays on the virtual clock
/// (`RecordingTranscript`); on disk it is JSON Lines, versioned (`RecordingFormat`).
public struct CacheRecording: Sendable, Equatable {
    public var records: [CacheRecord]
    public init(records: [CacheRecord]) { self.records = records }
}

/// How a read was made: blocking (the virtual clock runs to its answer), `nowait` (what the cache
/// has now), or awaited in live mode (`get`, whose answer comes later: the shell's `get --async`).
public enum ReadMode: String, Sendable, Equatable {
    case blocking, nowait, async
}

/// One line of `keys`.
public struct KeyEntry: Sendable, Equatable {
    public var key: String
    public var state: EntryState
    public var ageMs: Int64
    public init(key: String, state: EntryState, ageMs: Int64) { self.key = key; self.state = state; self.ageMs = ageMs }
}

/// One recorded event. A unit of the session (a `call`, or a `step` of the clock) is written
/// after what happened during it: the records since the previous unit (requests sent, answers,
/// observer events, finished reads) belong to it.
public enum CacheRecord: Sendable, Equatable {
    /// The recording began: the cache's whole state as a snapshot document (SPEC §5.2); `live`
    /// for a cache over an app's async functions.
    case begin(snapshot: JSONValue, live: Bool)
    /// The cache moved its clock to `to` (ms since the epoch), running what fell due: a live
    /// cache catching up with the clock, an answer's arrival, its timer, or `advance`.
    case step(to: Int64)
    /// A call on the cache, at `at`, and what it returned; `ended` is the clock after it (a
    /// blocking read moves the virtual clock).
    case call(CacheCall, returned: RecordedReturn, at: Int64, ended: Int64)
    /// A request sent to the origin.
    case sent(id: UInt64, kind: RequestKind, keys: [String], at: Int64)
    /// Live mode: an answer reached the cache at `at` (the clock's time); it takes effect at
    /// `applied` (the same millisecond, or the next one to keep the recorded order), or is not
    /// used (nil) when the request had completed or timed out.
    case arrived(id: UInt64, at: Int64, applied: Int64?)
    /// A request completed at `at` with `answer` (the origin's, or the timeout's failure).
    /// `http`: an HTTP request's answer (status, fields, body), beside `answer`.
    case completed(id: UInt64, answer: RequestAnswer?, at: Int64, http: HTTPAnswer? = nil)
    /// An observer event (B15).
    case observed(CacheEvent)
    /// A read that waited for request `request` finished: what the app's `get` returned.
    case read(request: UInt64, result: ReadResult, at: Int64)
    /// A validation answer nobody waited for arrived.
    case validated(ValidationResult, at: Int64)
    /// The recording stopped at `at`.
    case end(at: Int64)
}

/// What a recorded call returned.
public enum RecordedReturn: Sendable, Equatable {
    case nothing
    case read(ReadResult)
    /// An awaited read that waits for its request: its result comes as a `read` record.
    case waiting
    case reads([ReadResult])
    case entries([KeyEntry])
    case keys([String])
    case validation(ValidationResult)
    /// `defineNamespace`: the policy in force after it, and the keys it changed.
    case policy(Policy, keys: [String])
    /// `unwatch` of one scope: whether it was watched.
    case watched(Bool)
    /// `unpoll` of one key: whether it was polled.
    case polled(Bool)
    /// The call threw this `CacheError` message.
    case error(String)
    /// An HTTP read or request: what the app got.
    case http(HTTPReadResult)
}
