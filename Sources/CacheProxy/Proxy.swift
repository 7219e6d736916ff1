import CacheCore
import NIOCore
import NIOHTTP1
import NIOPosix
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `cachesh proxy` (docs/SPEC.md §8, Proxy): a caching reverse proxy in front of one upstream,
/// over a live `Cache` on the system clock whose namespace `proxy` is an HTTP one (shared unless
/// `--private`). The server and the upstream client are SwiftNIO's HTTP/1.1 codecs.
public final class CachingProxy: Sendable {
    let options: ProxyOptions
    let cache: Cache
    let upstream: UpstreamClient
    let log: ProxyLog
    let group: MultiThreadedEventLoopGroup
    /// Client connections open now (bounded by `maxConnections`).
    let connections = Atomic<Int>(0)

    /// Sets up the cache (the configuration, then the `proxy` namespace) and the log; listens
    /// nothing yet. - Throws: a usage error (a log that cannot be opened, a configuration refused).
    public init(_ options: ProxyOptions) async throws(ProxyUsageError) {
        self.options = options
        // Read first: a CA file that cannot be read is bad usage, before any thread starts.
        let tls = options.upstreamTLS ? try UpstreamClient.tlsContext(caFile: options.upstreamCAFile) : nil
        group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, min(4, System.coreCount)))
        let upstream = UpstreamClient(group: group, host: options.upstreamHost, port: options.upstreamPort,
                                      authority: options.upstreamAuthority, limits: options.limits, tls: tls)
        self.upstream = upstream
        log = try ProxyLog(path: options.logPath)
        cache = Cache(fetch: { _ in throw CacheError("the proxy's namespace is an HTTP one") }, clock: SystemClock(),
                      requestTimeout: options.limits.upstreamTimeoutMs, http: { request in try await upstream.send(request) })
        do {
            if let configuration = options.configuration { _ = try await cache.configure(configuration) }
            var change = PolicyChange()
            change.http = HTTPNamespace(origin: options.upstreamOrigin, policy: HTTPCachePolicy(shared: options.shared))
            let current = await cache.policy(of: ProxyOptions.namespace)
            if options.configuration?.namespaces[ProxyOptions.namespace]?.max == nil, current.max == nil {
                change.max = .some(options.limits.maxEntries)
            }
            if let http = current.http {
                change.http!.policy.heuristicPercent = http.policy.heuristicPercent
            }
            _ = try await cache.defineNamespace(ProxyOptions.namespace, change)
        } catch {
            throw ProxyUsageError("proxy: \(error.message)")
        }
    }

    /// Listens and serves until the listening channel closes. `ready` gets the address it
    /// listens on (`http://127.0.0.1:8001`; the port picked when 0 was asked).
    public func run(ready: @Sendable (String) -> Void) async throws {
        let limits = options.limits
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .childChannelInitializer { [self] channel in
                let open = connections.add(1, ordering: .relaxed).newValue
                channel.closeFuture.whenComplete { [self] _ in _ = connections.subtract(1, ordering: .relaxed) }
                guard open <= limits.maxConnections else {
                    log.write(ProxyLog.line(timeMs: SystemClock().nowMs(), method: "-", key: "-", status: 0,
                                            decision: "refused: more than \(limits.maxConnections) connections", upstream: "-", latencyMicros: 0))
                    return channel.close()
                }
                return channel.eventLoop.makeCompletedFuture {
                    var decoderLimits = NIOHTTPDecoderLimitConfiguration()
                    decoderLimits.maxHeaderListSize = limits.maxHeaderBytes
                    decoderLimits.maxHeaderFieldSize = limits.maxHeaderBytes
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withPipeliningAssistance: true, withErrorHandling: false, withOutboundHeaderValidation: true,
                        withEncoderConfiguration: .init(), withDecoderLimitConfiguration: decoderLimits)
                    try channel.pipeline.syncOperations.addHandler(IdleStateHandler(allTimeout: .milliseconds(limits.idleTimeoutMs)))
                    try channel.pipeline.syncOperations.addHandler(ProxyConnectionHandler(proxy: self))
                }
            }
        let channel = try await bootstrap.bind(host: options.listenHost, port: options.listenPort).get()
        let host = options.listenHost.contains(":") ? "[\(options.listenHost)]" : options.listenHost
        ready("http://\(host):\(channel.localAddress?.port ?? options.listenPort)")
        try await channel.closeFuture.get()
    }

    /// `cachesh proxy`'s whole run: never returns. A usage error (or an address it cannot listen
    /// on) is one line on standard error and exit 2; once listening, one line on standard
    /// output says where. With `--record FILE` the cache records from before the first request,
    /// and SIGINT or SIGTERM stops the proxy: `write` gets the recording (the executable turns it
    /// into a transcript and writes FILE), then the process exits 0 (1 when it could not write).
    /// `inspect` starts the inspector on the proxy's cache (`--inspect`) before the proxy listens;
    /// it returns why it could not (a usage error: exit 2).
    public static func main(_ options: ProxyOptions,
                            write: (@Sendable (CacheRecording, String) -> String?)? = nil,
                            inspect: (@Sendable (Cache) -> String?)? = nil) -> Never {
        // Many connections need many descriptors: the soft limit goes up to the hard one.
        var limit = rlimit()
        #if canImport(Glibc)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        if getrlimit(resource, &limit) == 0, limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(resource, &limit)
        }
        signal(SIGPIPE, SIG_IGN)
        // Kept alive for the whole run: the handlers of SIGINT and SIGTERM when recording.
        var stopSignals: [any DispatchSourceSignal] = []
        if let path = options.recordPath, let write {
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .main)
                source.setEventHandler {
                    Task {
                        guard let cache = await ProxyRun.shared.cache else { exit(0) }
                        do {
                            let recording = try await cache.stopRecording()
                            if let problem = write(recording, path) {
                                writeLine(2, "cachesh: proxy: \(problem)\n")
                                exit(1)
                            }
                            writeLine(1, "cachesh proxy: wrote \(path)\n")
                            exit(0)
                        } catch {
                            writeLine(2, "cachesh: proxy: --record: \((error as? CacheError)?.message ?? "\(error)")\n")
                            exit(1)
                        }
                    }
                }
                source.resume()
                stopSignals.append(source)
            }
        }
        withExtendedLifetime(stopSignals) {}
        Task {
            do {
                let proxy = try await CachingProxy(options)
                if options.recordPath != nil {
                    await proxy.cache.startRecording()
                    await ProxyRun.shared.set(proxy.cache)
                }
                if let inspect, let problem = inspect(proxy.cache) {
                    writeLine(2, "cachesh: proxy: --inspect: \(problem)\n")
                    exit(2)
                }
                try await proxy.run { address in
                    let mode = options.shared ? "shared" : "private"
                    let line = "cachesh proxy: listening on \(address), forwarding to \(options.upstreamOrigin) (\(mode) cache)\n"
                    writeLine(1, line)
                }
                exit(0)
            } catch let error as ProxyUsageError {
                writeLine(2, "cachesh: \(error.message)\n")
                exit(2)
            } catch {
                writeLine(2, "cachesh: proxy: cannot listen on \(options.listenHost):\(options.listenPort): \(error)\n")
                exit(2)
            }
        }
        withExtendedLifetime(stopSignals) { dispatchMain() }
    }

    /// A GET's key and request fields; nil when the target is no path (the async path answers 400).
    func readKey(uri: String, fields: HTTPHeaders) -> (String, HTTPFields)? {
        guard uri.hasPrefix("/"), let key = try? Cache.httpKey(ProxyOptions.namespace + ":" + uri) else { return nil }
        return (key, UpstreamClient.endToEnd(fields))
    }

    /// What one request gets: the cache's answer (or the upstream's, for a method it does not cache).
    func answer(method: String, uri: String, fields: HTTPHeaders, body: [UInt8]?) async -> ProxyAnswer {
        let request = UpstreamClient.endToEnd(fields)
        // The key: the namespace and the target (origin-form; an absolute-form's path).
        var target = uri
        if !target.hasPrefix("/") {
            let lower = target.lowercased()
            if lower.hasPrefix("http://") || lower.hasPrefix("https://") {
                let rest = target.drop { $0 != "/" }.dropFirst(2)
                target = rest.firstIndex(of: "/").map { String(rest[$0...]) } ?? "/"
            }
        }
        let key: String
        do { key = try Cache.httpKey(ProxyOptions.namespace + ":" + target) } catch {
            return ProxyAnswer.plain(400, "bad request target: \(error.message)")
        }
        let result: HTTPReadResult
        do {
            switch method {
            case "GET":
                result = try await cache.httpGet(key, request: request)
            case _ where method == "HEAD" || (!HTTPCachePolicy.isSafe(method) && method != "CONNECT"):
                // HEAD (§4.3.5) and every unsafe method (§4.4: POST, PUT, DELETE, PATCH, M-SEARCH...).
                result = try await cache.httpSend(method, key, request: request, body: body.map { ProxyBody.json($0) })
            default:
                // Not a method a cache stores or invalidates for: straight to the upstream.
                let answer = (try? await upstream.send(HTTPRequest(method: method, key: key, fields: request, body: body.map { ProxyBody.json($0) })))
                    ?? UpstreamClient.badGateway("no answer")
                var status = HTTPCacheStatus()
                status.fwd = "method"
                status.fwdStatus = answer.status
                return ProxyAnswer(HTTPReadResult(key: key, status: answer.status, fields: answer.fields, body: answer.body, cacheStatus: status),
                                   key: key)
            }
        } catch {
            return ProxyAnswer.plain(400, error.message)
        }
        return ProxyAnswer(result, key: key)
    }
}

/// Writes `text` whole to descriptor `fd`.
func writeLine(_ fd: Int32, _ text: String) {
    var text = text
    text.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 { if errno == EINTR { continue }; return }
            offset += n
        }
    }
}

/// The answer the proxy writes for one request, and what its log line says.
struct ProxyAnswer: Sendable {
    var status: Int
    /// The fields sent (`Content-Length` and `Connection` are set as it is written).
    var headers: HTTPHeaders
    var body: ByteBuffer
    var decision: String
    var upstream: String

    static func plain(_ status: Int, _ message: String) -> ProxyAnswer {
        let decision = "cachesh; detail=" + JSONValue.string(message).compactText
        return ProxyAnswer(status: status, headers: HTTPHeaders([("Content-Type", "text/plain; charset=utf-8"), ("Cache-Status", decision)]),
                           body: ByteBuffer(string: "\(status) \(message)\n"), decision: decision, upstream: "-")
    }

    init(status: Int, headers: HTTPHeaders, body: ByteBuffer, decision: String, upstream: String) {
        self.status = status; self.headers = headers; self.body = body; self.decision = decision; self.upstream = upstream
    }

    init(_ result: HTTPReadResult, key: String) {
        var cacheStatus = result.cacheStatus
        var upstreamError: String?
        var headers = HTTPHeaders()
        headers.reserveCapacity(result.fields.lines.count + 2)
        var upstreamCacheStatus: String?
        for field in CDNCacheControl.served(result.fields) {
            if HTTPFields.same(field.name, UpstreamClient.errorField) { upstreamError = field.value; continue }
            if HTTPFields.same(field.name, "Content-Length") || HTTPFields.same(field.name, "Transfer-Encoding") { continue }
            if HTTPFields.same(field.name, "Cache-Status") {
                upstreamCacheStatus = upstreamCacheStatus.map { $0 + ", " + field.value } ?? field.value
                continue
            }
            headers.add(name: field.name, value: field.value)
        }
        if let upstreamError {
            cacheStatus.detail = upstreamError
            cacheStatus.fwdStatus = nil
        }
        let decision = cacheStatus.text
        // RFC 9211 §2: each cache appends its entry; the one nearest the user comes last.
        headers.add(name: "Cache-Status", value: upstreamCacheStatus.map { $0 + ", " + decision } ?? decision)
        self.status = result.status ?? 504
        self.decision = decision
        self.headers = headers
        body = ProxyBody.buffer(result.body)
        upstream = upstreamError != nil ? "error" : result.cacheStatus.fwdStatus.map(String.init) ?? "-"
    }
}

/// One client connection: each request (the pipelining handler gives them one at a time) goes
/// to the proxy and its answer is written back; a request the decoder refuses is a 400 (431 for
/// headers past the bound) and the connection closes.
final class ProxyConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let proxy: CachingProxy
    private var head: HTTPRequestHead?
    private var body: [UInt8]?
    private var tooLarge = false
    private var busy = false
    /// An answer that ends the connection was written: nothing more is read or answered.
    private var closing = false
    private var started: Int64 = 0
    /// The log line being made (`write`), its capacity kept between requests.
    private var logLine: [UInt8] = []

    init(proxy: CachingProxy) { self.proxy = proxy }

    /// The method as sent: NIO names `M-SEARCH` `MSEARCH`.
    static func methodName(_ method: HTTPMethod) -> String { method == .MSEARCH ? "M-SEARCH" : method.rawValue }

    private static func monotonicMicros() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1000
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = nil
            tooLarge = false
            busy = true
            started = Self.monotonicMicros()
            if let length = head.headers.first(name: "content-length").flatMap(Int.init), length > proxy.options.limits.maxBodyBytes {
                // Answered at once, without reading the body; the connection then ends.
                tooLarge = true
                self.head = nil
                var answer = ProxyAnswer.plain(413, "request body larger than \(proxy.options.limits.maxBodyBytes) bytes")
                answer.headers.add(name: "Connection", value: "close")
                write(context: context, head: head, answer: answer, keepAlive: false)
            }
        case .body(let buffer):
            guard !tooLarge else { return }
            if (body?.count ?? 0) + buffer.readableBytes > proxy.options.limits.maxBodyBytes {
                tooLarge = true
                body = nil
                return
            }
            if body == nil { body = [] }
            body!.append(contentsOf: buffer.readableBytesView)
        case .end:
            guard let head else { return }
            self.head = nil
            if tooLarge {
                var answer = ProxyAnswer.plain(413, "request body larger than \(proxy.options.limits.maxBodyBytes) bytes")
                answer.headers.add(name: "Connection", value: "close")
                write(context: context, head: head, answer: answer, keepAlive: false)
                return
            }
            let proxy = self.proxy
            let method = Self.methodName(head.method)
            let uri = head.uri
            let headers = head.headers
            let body = self.body
            self.body = nil
            let loop = context.eventLoop
            let bound = NIOLoopBound((self, context), eventLoop: loop)
            // Always as a task of the loop, never inside the cache's isolation: writing the end of
            // an answer may hand the pipelining handler's next request to `channelRead`, which
            // enters the cache again.
            let deliver: @Sendable (ProxyAnswer) -> Void = { answer in
                loop.execute { bound.value.0.write(context: bound.value.1, head: head, answer: answer, keepAlive: head.isKeepAlive) }
            }
            if method == "GET", let (key, request) = proxy.readKey(uri: uri, fields: headers) {
                // A read with no task: answered before this returns when it is a hit.
                proxy.cache.httpGet(key, request: request) { result in
                    switch result {
                    case .success(let read): deliver(ProxyAnswer(read, key: key))
                    case .failure(let error): deliver(ProxyAnswer.plain(400, error.message))
                    }
                }
                return
            }
            Task { deliver(await proxy.answer(method: method, uri: uri, fields: headers, body: body)) }
        }
    }

    private func write(context: ChannelHandlerContext, head: HTTPRequestHead, answer: ProxyAnswer, keepAlive: Bool) {
        var headers = answer.headers
        let noBody = head.method == .HEAD || answer.status == 304 || answer.status == 204 || (100..<200).contains(answer.status)
        if answer.status != 304 && answer.status != 204 {
            // No answer carries one before this (`ProxyAnswer` leaves the upstream's out).
            headers.add(name: "Content-Length", value: String(answer.body.readableBytes))
        }
        if !keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
        // The log line first: once the app has the answer, its line is written. Made in this
        // connection's own buffer, which keeps its capacity from one request to the next.
        logLine.removeAll(keepingCapacity: true)
        ProxyLog.appendLine(to: &logLine, timeMs: SystemClock().nowMs(), method: Self.methodName(head.method), key: head.uri,
                            status: answer.status, decision: answer.decision, upstream: answer.upstream,
                            latencyMicros: Self.monotonicMicros() - started)
        proxy.log.write(logLine)
        let responseHead = HTTPResponseHead(version: head.version, status: HTTPResponseStatus(statusCode: answer.status), headers: headers)
        context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
        if !noBody && answer.body.readableBytes > 0 {
            context.write(wrapOutboundOut(.body(.byteBuffer(answer.body))), promise: nil)
        }
        busy = false
        guard !keepAlive else {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            return
        }
        closing = true
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent, !busy {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        // A request the decoder refuses: a clear answer, a log line, and the connection ends.
        if let parserError = error as? HTTPParserError, !closing, !busy || head != nil {
            let tooLarge = parserError == .headerOverflow
            let status = tooLarge ? 431 : 400
            let message = tooLarge ? "request header fields larger than \(proxy.options.limits.maxHeaderBytes) bytes" : "malformed request (\(parserError))"
            var answer = ProxyAnswer.plain(status, message)
            answer.headers.add(name: "Connection", value: "close")
            proxy.log.write(ProxyLog.line(timeMs: SystemClock().nowMs(), method: head.map { Self.methodName($0.method) } ?? "-", key: head?.uri ?? "-",
                                          status: status, decision: answer.decision, upstream: "-", latencyMicros: 0))
            var headers = answer.headers
            headers.add(name: "Content-Length", value: String(answer.body.readableBytes))
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: headers))),
                          promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(answer.body))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            busy = true
            return
        }
        context.close(promise: nil)
    }
}

/// The running proxy's cache, for the signal handler that ends a recording.
actor ProxyRun {
    static let shared = ProxyRun()
    private(set) var cache: Cache?
    func set(_ cache: Cache) { self.cache = cache }
}
