@_spi(Engine) import CacheCore
import CacheServer
import Testing

/// A cache over a simulated server on the virtual clock, for tests. Its engine checks every
/// invariant after each operation: a small test's state is cheap to check whole.
struct Harness {
    let engine: CacheEngine
    let origin: SimulatedServer
    let events: EventLog

    init(_ namespaces: [String: Policy] = [:], push: [String: PushRule] = [:], latency: Int64 = 100) {
        origin = SimulatedServer()
        origin.latency = latency
        engine = CacheEngine(origin: origin)
        engine.checksInvariants = true
        events = EventLog()
        engine.delegate = events
        if !namespaces.isEmpty || !push.isEmpty {
            try! engine.configure(CacheConfiguration(namespaces: namespaces, push: push))
        }
    }

    /// Milliseconds since the clock's start.
    var elapsed: Int64 { engine.now - engine.clockStart }

    func server(_ key: String, _ value: JSONValue) { origin.set(key, value, at: engine.now) }

    func advance(_ ms: Int64) { try! engine.advance(by: ms) }

    func get(_ key: String, force: Bool = false, nowait: Bool = false) -> ReadResult {
        try! engine.get(key, force: force, nowait: nowait)
    }

    func value(_ key: String) -> JSONValue? { engine.peek(key).value }
}

/// Records what observers would see, and runs scheduled external work when asked to.
final class EventLog: CacheEngineDelegate {
    var events: [CacheEvent] = []
    var validations: [ValidationResult] = []
    var onScheduled: ((Int) -> Void)?

    func cacheEngine(_ engine: CacheEngine, observed event: CacheEvent) { events.append(event) }
    func cacheEngine(_ engine: CacheEngine, runScheduled token: Int) { onScheduled?(token) }
    func cacheEngine(_ engine: CacheEngine, validated result: ValidationResult) { validations.append(result) }

    /// `cause key` for each event, e.g. `"stored feed:1"`.
    var summary: [String] { events.map { "\($0.cause.rawValue) \($0.key)" } }
}

func json(_ text: String) -> JSONValue { try! JSONValue(parsing: text) }
func patch(_ text: String) -> Patch { try! Patch(json(text)) }

let minute: Int64 = 60_000
