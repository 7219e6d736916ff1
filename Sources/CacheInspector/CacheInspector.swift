import CacheCore
import CacheShell
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The shell on a running app's cache (`cachesh attach`, SPEC §9): an app starts it with one line,
/// in its debug builds,
///
///     let inspector = try CacheInspector.start(cache: cache)
///
/// and it listens on a Unix-domain socket in `/tmp/cachesh-$UID/` (or `$CACHESH_SOCKET_DIR`; or
/// on a loopback TCP port guarded by a token) for shells that attach. Nothing listens unless the app calls it. Each
/// connection has a thread that reads its requests and one that writes its responses; what waits
/// to be written is bounded (a client past the bound is dropped), so a slow or stuck client never
/// makes the app's memory grow, and the app's calls never wait for a client: a change reaches
/// the clients that watch it by a queue append inside the call.
public final class CacheInspector: Sendable {
    /// The protocol version this inspector speaks (SPEC §9 Protocol).
    public static let protocolVersion = 1
    /// The longest request line, in bytes (SPEC §7.1).
    public static let maxRequestBytes = 1 << 20
    /// The most bytes waiting to be sent to one client before it is dropped (SPEC §7.1).
    public static let maxQueuedBytes = 64 << 20
    /// The most clients attached at once, counted from their `hello` (SPEC §7.1).
    public static let maxClients = 8
    /// The most connections open at once, those yet to say `hello` included (SPEC §7.1): a
    /// connection made only to see whether the app listens (`cachesh attach --list`) takes no
    /// shell's place.
    public static let maxConnections = 16
    /// How long a connection may stay without saying `hello` (SPEC §7.1): then it is closed, so
    /// that connections that say nothing (one that does not know the token, say) hold none of
    /// the 16 places.
    public static let helloDeadline: Duration = .seconds(10)

    /// What `cachesh attach` takes to reach this inspector: the socket's path, or `127.0.0.1:PORT`.
    public let address: String
    /// The token a TCP client must give (nil for a Unix-domain socket).
    public let token: String?
    /// The most bytes waiting for one client (``maxQueuedBytes`` unless `start` was given less).
    let queueLimit: Int
    /// How long a connection may stay without saying `hello` (``helloDeadline`` unless `start`
    /// was given another).
    let helloWait: Duration

    let cache: Cache
    private let listener: Int32
    private let socketPath: String?
    let state = Mutex(State())

    struct State {
        var connections: [Int: Connection] = [:] {
            didSet { attached = Array(connections.values) }
        }
        /// `connections`' values, made once per change of it, not once per change to the cache.
        var attached: [Connection] = []
        var nextID = 0
        /// The connections whose `hello` was taken (at most `maxClients`).
        var shells = 0
        var stopped = false
        /// The changes while shells are attached (`timeline`, `explain`); emptied when the last
        /// one leaves.
        var timeline = AttachedTimeline()
    }

    /// Starts listening for `cachesh attach`.
    /// - Parameters:
    ///   - endpoint: a Unix-domain socket (by default `/tmp/cachesh-$UID/PID`, or
    ///     `$CACHESH_SOCKET_DIR/PID`) or a loopback TCP port.
    ///   - queueLimit: the most bytes waiting for one client before it is dropped (at most
    ///     ``maxQueuedBytes``; less in tests of the bound).
    ///   - helloDeadline: how long a connection may stay without saying `hello` (10 ms to an
    ///     hour; ``helloDeadline`` unless a test of the bound, or of the connections' bound on a
    ///     busy machine, needs another).
    ///   - announce: prints the one line that says where it listens (and, for TCP, the token,
    ///     printed only here); by default to standard error.
    /// - Throws: `InspectorError` when it cannot listen (the directory is not the user's own, the
    ///   path is too long, the port is taken).
    @discardableResult
    public static func start(cache: Cache, endpoint: InspectorEndpoint = .unixSocket(), queueLimit: Int = maxQueuedBytes,
                             helloDeadline: Duration = helloDeadline,
                             announce: @Sendable (String) -> Void = { line in
                                 var line = line + "\n"
                                 line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
                             }) throws(InspectorError) -> CacheInspector {
        let inspector: CacheInspector
        switch endpoint {
        case .unixSocket(let given):
            let path: String
            if let given { path = given } else { path = try Listener.userDirectory() + "/\(getpid())" }
            inspector = CacheInspector(cache: cache, listener: try Listener.unixSocket(at: path), address: path, token: nil, socketPath: path,
                                        queueLimit: queueLimit, helloDeadline: helloDeadline)
            announce("cachesh inspector: listening on \(path) (cachesh attach \(path))")
        case .tcp(let port):
            let (fd, got) = try Listener.loopback(port: port)
            let token = Listener.token()
            inspector = CacheInspector(cache: cache, listener: fd, address: "127.0.0.1:\(got)", token: token, socketPath: nil,
                                        queueLimit: queueLimit, helloDeadline: helloDeadline)
            announce("cachesh inspector: listening on 127.0.0.1:\(got); token \(token) (CACHESH_TOKEN=... cachesh attach 127.0.0.1:\(got))")
        }
        inspector.acceptInBackground()
        return inspector
    }

    private init(cache: Cache, listener: Int32, address: String, token: String?, socketPath: String?, queueLimit: Int,
                 helloDeadline: Duration) {
        self.queueLimit = min(max(queueLimit, 1 << 16), Self.maxQueuedBytes)
        self.helloWait = min(max(helloDeadline, .milliseconds(10)), .seconds(3600))
        self.cache = cache
        self.listener = listener
        self.address = address
        self.token = token
        self.socketPath = socketPath
    }

    /// Stops listening and drops every client; the cache's change tap is removed (soon after:
    /// `stop` may be called from code isolated to the cache, so it does not wait for the cache).
    public func stop() {
        let connections = state.withLock { state -> [Connection] in
            state.stopped = true
            defer { state.connections.removeAll() }
            return Array(state.connections.values)
        }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        if let socketPath { unlink(socketPath) }
        for connection in connections { connection.drop() }
        let cache = self.cache
        Task { await cache.setChangeTap(nil) }
    }

    private func acceptInBackground() {
        DispatchQueue(label: "cachesh-inspector.accept").async { [self] in
            while true {
                let fd = accept(listener, nil, nil)
                if fd < 0 {
                    if errno == EINTR || errno == ECONNABORTED { continue }
                    return
                }
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                #if canImport(Darwin)
                var on: Int32 = 1
                setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
                #endif
                let connection: Connection? = state.withLock { state in
                    guard !state.stopped, state.connections.count < Self.maxConnections else { return nil }
                    state.nextID += 1
                    let made = Connection(id: state.nextID, fd: fd, inspector: self)
                    state.connections[made.id] = made
                    return made
                }
                guard let connection else {
                    let line = Protocol.line(["id": .null, "ok": .bool(false), "protocol": .int(Int64(Self.protocolVersion)),
                                              "error": .string("attach: the app has \(Self.maxConnections) connections open, the most it takes")])
                    _ = Listener.writeAll(fd, line)
                    close(fd)
                    continue
                }
                connection.start()
            }
        }
    }

    /// A connection ended: forgotten, its recording stopped, and the tap removed when no shell is
    /// attached any more.
    func ended(_ connection: Connection) {
        let wasShell = connection.wasGreeted
        state.withLock { state in
            _ = state.connections.removeValue(forKey: connection.id)
            if wasShell { state.shells -= 1 }
            // No shell left (a connection yet to say hello may be open): the changes go.
            if state.shells == 0 { state.timeline = AttachedTimeline() }
        }
        if let stream = connection.recordingStream {
            cache.withIsolation { cache in
                if cache.isRecording(to: stream) { _ = try? cache.stopRecording() }
            }
        }
        updateTap()
    }

    /// Sets the cache's change tap while a shell is attached (for its `timeline` and `watch`),
    /// and removes it otherwise (nobody attached costs the app's calls nothing).
    func updateTap() {
        let attached = state.withLock { $0.connections.values.contains { $0.isAttached } }
        cache.withIsolation { cache in
            if attached {
                guard !cache.hasChangeTap else { return }
                let clockStart = cache.clockStart
                cache.setChangeTap { [weak self] event in self?.deliver(event, clockStart: clockStart) }
            } else if cache.hasChangeTap {
                cache.setChangeTap(nil)
            }
        }
    }

    /// Takes a shell's `hello`: false when `maxClients` shells are attached already.
    func admitShell() -> Bool {
        state.withLock { state in
            guard state.shells < Self.maxClients else { return false }
            state.shells += 1
            return true
        }
    }

    /// Gives back the place `admitShell` took for a `hello` that came too late.
    func releaseShell() {
        state.withLock { $0.shells -= 1 }
    }

    /// How many changes the timeline has had: a shell attached now sees those after.
    func timelineMark() -> Int { state.withLock { $0.timeline.appended } }

    /// The changes since a shell attached, once `mark` changes had been noted.
    func timeline(since mark: Int) -> AttachedTimeline { state.withLock { $0.timeline.since(mark) } }

    /// Inside the app's call: notes the event in the timeline and queues it for each client
    /// watching its scope (rendered later, on the client's own thread).
    private func deliver(_ event: CacheEvent, clockStart: Int64) {
        let connections = state.withLock { state in
            state.timeline.append(event)
            return state.attached
        }
        for connection in connections { connection.deliver(event, clockStart: clockStart) }
    }
}

/// Lines of the protocol.
enum Protocol {
    static func line(_ fields: [String: JSONValue]) -> [UInt8] {
        Array((JSONValue.object(fields).compactText + "\n").utf8)
    }
}
