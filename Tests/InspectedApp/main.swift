// An app that embeds a live Cache and starts CacheInspector, for the tests of `cachesh attach`.
//
//     inspected-app unix PATH | inspected-app default | inspected-app tcp
//
// It prints (for TCP `token TOKEN`,) `ready ADDRESS` and `go`, then runs the app's calls it reads on
// standard input, one a line, printing what each gave: `get KEY` (the app awaits a read),
// `fetches` (how many keys its origin was asked for), `big N` (a value of N bytes at feed:big),
// `record` (it records itself, in memory),
// `stop` (it stops). It ends at the end of its input.
import CacheCore
import CacheInspector
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One line to standard output, written at once (a pipe's reader waits for it).
func say(_ line: String) {
    var line = line + "\n"
    line.withUTF8 { _ = write(1, $0.baseAddress, $0.count) }
}

let fetched = Mutex(0)
let cache = Cache(fetch: { keys in
    let n = fetched.withLock { count -> Int in
        count += keys.count
        return count
    }
    var values: [String: JSONValue] = [:]
    for key in keys { values[key] = .object(["title": .string(key), "fetch": .int(Int64(n))]) }
    return values
})
_ = try await cache.defineNamespace("feed", PolicyChange(ttl: 3_600_000))
_ = try await cache.defineNamespace("profile", PolicyChange(ttl: 3_600_000))
await cache.put("feed:home", .object(["items": .array([.int(1), .int(2)])]))
await cache.put("profile:42", .object(["name": .string("Ada")]))

let arguments = CommandLine.arguments
let endpoint: InspectorEndpoint = arguments.count > 2 && arguments[1] == "unix" ? .unixSocket(path: arguments[2])
    : arguments.count > 1 && arguments[1] == "default" ? .unixSocket() : .tcp()
// `queue=N`: a smaller bound on what waits for a client, for the test of a flood.
let queueLimit = arguments.last.flatMap { $0.hasPrefix("queue=") ? Int($0.dropFirst(6)) : nil } ?? CacheInspector.maxQueuedBytes
// `hello=MS`: a shorter time a connection may stay without saying hello, for the test of it.
let helloDeadline = arguments.last.flatMap { $0.hasPrefix("hello=") ? Int($0.dropFirst(6)) : nil }
    .map { Duration.milliseconds($0) } ?? CacheInspector.helloDeadline
let inspector: CacheInspector
do {
    inspector = try CacheInspector.start(cache: cache, endpoint: endpoint, queueLimit: queueLimit, helloDeadline: helloDeadline)
} catch {
    say("cannot start: \(error)")
    exit(1)
}
if let token = inspector.token { say("token \(token)") }
say("ready \(inspector.address)")
say("go")

while let line = readLine() {
    let words = line.split(separator: " ").map(String.init)
    switch words.first {
    case "get" where words.count == 2:
        do {
            let result = try await cache.get(words[1])
            say("got \(words[1]) \(result.value?.compactText ?? "null")")
        } catch {
            say("error \(error)")
        }
    case "fetches":
        say("fetches \(fetched.withLock { $0 })")
    case "big" where words.count == 2:
        await cache.put("feed:big", .string(String(repeating: "x", count: Int(words[1]) ?? 0)))
        say("big")
    case "record":
        await cache.startRecording()
        say("recording")
    case "stop":
        let calls = (try? await cache.stopRecording())?.records.count ?? 0
        say("stopped \(calls)")
    default:
        say("unknown \(line)")
    }
}
inspector.stop()

