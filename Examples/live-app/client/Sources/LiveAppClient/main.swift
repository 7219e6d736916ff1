// The live example's app: the cache in live mode over a real HTTP API, driven by a scripted user
// session with real concurrency, recorded, and written as a transcript. It starts the inspector,
// so `cachesh attach` can look inside while it runs.
//
//     LiveAppClient http://127.0.0.1:PORT session.transcript   # records its session itself
//     LiveAppClient http://127.0.0.1:PORT --pause              # waits for a line on standard input
//                                                              # before each part (a shell attaches)
import CacheCore
import CacheInspector
import CacheShell
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct HTTPFailure: Error, CustomStringConvertible {
    var description: String
}

/// The app's API client: one URLSession call per endpoint, answers as JSON.
struct API: Sendable {
    let base: URL

    func call(_ method: String, _ path: String, _ body: JSONValue? = nil) async throws -> JSONValue {
        var request = URLRequest(url: base.appendingPathComponent(path))
        request.httpMethod = method
        request.timeoutInterval = 10
        if let body {
            request.httpBody = Data(body.compactText.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else { throw HTTPFailure(description: "HTTP \(status) from \(method) /\(path)") }
        return try JSONValue(parsing: String(decoding: data, as: UTF8.self))
    }

    /// The endpoint of a cache key: `feed:home` is GET /feed, `profile:ID` is GET /profile/ID.
    func fetch(_ key: String) async throws -> JSONValue {
        if key == "feed:home" { return try await call("GET", "feed") }
        if key.hasPrefix("profile:") { return try await call("GET", "profile/" + key.dropFirst("profile:".count)) }
        throw HTTPFailure(description: "no endpoint for \(key)")
    }

    /// The cache's fetch function: every key at once, concurrently.
    func fetch(keys: [String]) async throws -> [String: JSONValue] {
        try await withThrowingTaskGroup(of: (String, JSONValue).self) { group in
            for key in keys { group.addTask { (key, try await fetch(key)) } }
            var values: [String: JSONValue] = [:]
            for try await (key, value) in group { values[key] = value }
            return values
        }
    }

    /// The cache's mutate function: a like is POST /posts/ID/like; then the keys it touched are
    /// fetched again, so the cache confirms them with the server's values.
    func mutate(_ request: MutationRequest) async throws -> [String: JSONValue] {
        guard let id = request.entityID else { throw HTTPFailure(description: "only entity mutations are sent") }
        _ = try await call("POST", "posts/\(id)/like")
        return try await fetch(keys: request.keys)
    }

    /// The server's knobs.
    func control(_ body: JSONValue) async throws { _ = try await call("POST", "control", body) }
    func changeData(_ body: JSONValue) async throws { _ = try await call("POST", "control/change", body) }
}

/// What the app's screens observe: every change the cache reports.
actor Screen {
    private var seen: [CacheEvent] = []

    func show(_ event: CacheEvent) { seen.append(event) }

    /// Waits (up to 10 s) until the cache has reported `cause` for `key`.
    func waitFor(_ cause: ChangeCause, _ key: String) async throws {
        for _ in 0..<1_000 {
            if seen.contains(where: { $0.cause == cause && $0.key == key }) { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw HTTPFailure(description: "no \(cause.rawValue) event for \(key) within 10 s")
    }
}

/// With `--pause`: says `part` and waits for a line on standard input (the test that attaches
/// goes on meanwhile); without, nothing.
func pause(_ part: String, _ pausing: Bool) {
    guard pausing else { return }
    say(part)
    _ = readLine()
}

/// One line on standard output, written at once (a test reads it through a pipe).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func runSession(api: API, output: String?) async throws {
    let cache = Cache(fetch: { try await api.fetch(keys: $0) }, mutate: { try await api.mutate($0) },
                      requestTimeout: 5_000)
    // The one line that lets `cachesh attach` in (a debug build's): it says where on standard error.
    let inspector = try CacheInspector.start(cache: cache)
    defer { inspector.stop() }
    let pausing = output == nil
    try await cache.configure(CacheConfiguration(
        namespaces: ["feed": Policy(ttl: 45 * 60_000, stale: 5 * 60_000), "profile": Policy(ttl: 45 * 60_000, stale: 5 * 60_000)],
        push: ["profile-updated": PushRule(invalidate: [], refresh: ["profile:{user}"], evict: [])]))
    try await api.control(["latency_ms": ["feed": 120, "profile": 60, "like": 40]])
    let screen = Screen()
    let changes = await cache.changes(in: .all)
    let observer = Task { for await event in changes { await screen.show(event) } }

    // The few lines an app adds: record, then write the transcript.
    if output != nil { await cache.startRecording() }
    pause("ready", pausing)

    // Open the feed: the feed and the user's own profile load at the same time.
    async let feed = cache.get("feed:home")
    async let me = cache.get("profile:42")
    _ = try await (feed, me)

    // Open Bo's profile while the feed tab reads what it has without waiting.
    async let bo = cache.get("profile:7")
    _ = try await cache.read("feed:home")
    _ = try await bo

    // Like post 1 while the server fails the like: shown at once, rolled back when it says no.
    try await api.control(["fail_next": ["like": 1]])
    _ = try await cache.mutate(entity: "1", patch: Patch(["likes": ["$inc": 1]]))
    try await screen.waitFor(.rolledBack, "feed:home")

    // A realtime event: someone else liked post 2 five times.
    try await api.changeData(["post": 2, "likes": 5])
    _ = try await cache.event(entity: "2", patch: Patch(["likes": ["$inc": 5]]))

    // A push: Ada's profile changed; the rule refreshes it.
    _ = try await cache.push("profile-updated", arguments: ["user": "42"])
    try await screen.waitFor(.refreshed, "profile:42")

    // Back to the feed: what the cache has, or (when a shell invalidated it) the API's again.
    pause("feed", pausing)
    let home = try await cache.get("feed:home")
    if pausing {
        // Invalidated, it is served stale at once and fetched again in the background (B9).
        say("feed:home \(home.state.rawValue) from the \(home.source.rawValue)")
        if home.state == .stale { try await screen.waitFor(.refreshed, "feed:home") }
        if home.state == .stale || home.source == .server { say("feed:home fetched again") }
    }
    pause("logout", pausing)

    // Log out.
    _ = await cache.clear()
    pause("done", pausing)

    observer.cancel()
    guard let output else { return }
    let recording = try await cache.stopRecording()
    let transcript = try RecordingTranscript.text(of: recording)
    try Data(transcript.utf8).write(to: URL(fileURLWithPath: output))
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let base = URL(string: arguments[1]) else {
    FileHandle.standardError.write(Data("usage: LiveAppClient http://127.0.0.1:PORT OUTPUT.transcript|--pause\n".utf8))
    exit(2)
}
do {
    try await runSession(api: API(base: base), output: arguments[2] == "--pause" ? nil : arguments[2])
} catch {
    FileHandle.standardError.write(Data("LiveAppClient: \(error)\n".utf8))
    exit(1)
}
