import CacheCore
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// The proxy's HTTP/1.1 client to its upstream, on SwiftNIO's codecs: one connection per request.
/// An upstream that answers badly (no status line, a reset, headers or a body past the bounds)
/// gives a `502` answer made here, which the cache treats as any `5xx` (RFC 5861's
/// `stale-if-error` applies); one that does not answer in time is the cache's own timeout (`504`).
struct UpstreamClient: Sendable {
    let group: EventLoopGroup
    let host: String
    let port: Int
    let authority: String
    let limits: ProxyLimits
    /// TLS for an `https://` upstream (one context for every connection); nil for `http://`.
    let tls: NIOSSLContext?

    init(group: EventLoopGroup, host: String, port: Int, authority: String, limits: ProxyLimits, tls: NIOSSLContext? = nil) {
        self.group = group; self.host = host; self.port = port; self.authority = authority; self.limits = limits; self.tls = tls
    }

    /// The TLS context of an `https://` upstream: the system's trust roots, and `caFile`'s
    /// certificates (PEM) beside them. - Throws: a usage error when `caFile` cannot be read.
    static func tlsContext(caFile: String?) throws(ProxyUsageError) -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .default
        configuration.certificateVerification = .fullVerification
        if let caFile { configuration.additionalTrustRoots = [.file(caFile)] }
        do {
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw ProxyUsageError(caFile.map { "proxy: --upstream-ca \($0): no PEM certificate could be read from it (\(error))" }
                                  ?? "proxy: cannot set up TLS: \(error)")
        }
    }

    /// The name sent in SNI and checked against the certificate; nil for an IP address (SNI
    /// carries no address: the certificate is then checked against the address connected to).
    static func serverName(_ host: String) -> String? {
        (try? SocketAddress(ipAddress: host, port: 0)) == nil ? host : nil
    }

    /// The field the answers made here carry, saying why, for the log line (never sent on).
    static let errorField = "Cachesh-Upstream-Error"

    /// Header fields that belong to one connection (RFC 9110 §7.6.1), never forwarded.
    static let hopByHop = ["connection", "keep-alive", "proxy-connection", "proxy-authenticate",
                           "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade"]

    /// `fields` without the connection's own: the hop-by-hop ones and those `Connection` names.
    /// Names are compared without regard to case, with no lowercased copies made.
    static func endToEnd(_ fields: HTTPHeaders) -> HTTPFields {
        var named: [String] = []
        for value in fields["connection"] {
            for token in value.split(separator: ",") { named.append(String(token.trimmingSpaces)) }
        }
        var out: [HTTPFields.Field] = []
        out.reserveCapacity(fields.count)
        for (name, value) in fields {
            if hopByHop.contains(where: { HTTPFields.same($0, name) }) || named.contains(where: { HTTPFields.same($0, name) }) { continue }
            out.append(HTTPFields.Field(name, value))
        }
        return HTTPFields(out)
    }

    /// The target of `key` (`proxy:/a?b` gives `/a?b`).
    static func target(ofKey key: String) -> String {
        guard let colon = key.firstIndex(of: ":") else { return key }
        return String(key[key.index(after: colon)...])
    }

    func send(_ request: HTTPRequest) async throws -> HTTPAnswer {
        let loop = group.next()
        let promise = loop.makePromise(of: HTTPAnswer.self)
        var requestHead = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: request.method), uri: Self.target(ofKey: request.key))
        for field in request.fields where !HTTPFields.same(field.name, "Content-Length") {
            requestHead.headers.add(name: field.name, value: field.value)
        }
        if !requestHead.headers.contains(name: "host") { requestHead.headers.add(name: "Host", value: authority) }
        let body = request.body.map { ProxyBody.bytes(json: $0) }
        if let body { requestHead.headers.add(name: "Content-Length", value: String(body.count)) }
        requestHead.headers.add(name: "Connection", value: "close")
        let limits = self.limits
        let tls = self.tls
        let serverName = tls == nil ? nil : Self.serverName(host)
        let head = requestHead
        let deadline = TimeAmount.milliseconds(limits.upstreamTimeoutMs + 1000)
        let connect = ClientBootstrap(group: loop)
            .connectTimeout(.milliseconds(limits.upstreamTimeoutMs))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: serverName))
                    }
                    var decoderLimits = NIOHTTPDecoderLimitConfiguration()
                    decoderLimits.maxHeaderListSize = limits.maxHeaderBytes
                    decoderLimits.maxHeaderFieldSize = limits.maxHeaderBytes
                    try channel.pipeline.syncOperations.addHTTPClientHandlers(decoderLimitConfiguration: decoderLimits)
                    try channel.pipeline.syncOperations.addHandler(UpstreamResponseHandler(promise: promise, maxBody: limits.maxBodyBytes,
                                                                                       maxHeader: limits.maxHeaderBytes))
                }
            }
            .connect(host: host, port: port)
        connect.whenComplete { result in
            switch result {
            case .failure(let error):
                promise.succeed(Self.badGateway("cannot connect to the upstream: \(error)"))
            case .success(let channel):
                // However the upstream behaves, the connection ends: a hanging one at the deadline
                // (after the cache's own timeout has answered the client).
                let timer = channel.eventLoop.scheduleTask(in: deadline) {
                    promise.succeed(Self.badGateway("the upstream did not answer in time"))
                    channel.close(promise: nil)
                }
                promise.futureResult.whenComplete { _ in
                    timer.cancel()
                    channel.close(promise: nil)
                }
                channel.write(HTTPClientRequestPart.head(head), promise: nil)
                if let body, !body.isEmpty {
                    channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: body))), promise: nil)
                }
                channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
            }
        }
        return try await promise.futureResult.get()
    }

    /// An answer made here for an upstream that answered badly or not at all.
    static func badGateway(_ why: String) -> HTTPAnswer {
        HTTPAnswer(status: 502, fields: HTTPFields([HTTPFields.Field(errorField, why)]), body: .text("502 Bad Gateway: \(why)\n"))
    }
}

/// Gathers one response; any error, or the connection ending before the response did, is a 502.
/// A promise completed twice is ignored after the first (`succeed` then on a completed promise
/// would trap), so every path goes through `finish`.
final class UpstreamResponseHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    private var promise: EventLoopPromise<HTTPAnswer>?
    private let maxBody: Int
    private let maxHeader: Int
    private var head: HTTPResponseHead?
    private var body: [UInt8] = []

    init(promise: EventLoopPromise<HTTPAnswer>, maxBody: Int, maxHeader: Int) {
        self.promise = promise
        self.maxBody = maxBody
        self.maxHeader = maxHeader
    }

    private func finish(_ answer: HTTPAnswer) {
        guard let promise else { return }
        self.promise = nil
        promise.succeed(answer)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            // An interim response (1xx) is not the answer.
            if head.status.code >= 100 && head.status.code < 200 { return }
            self.head = head
        case .body(let buffer):
            guard body.count + buffer.readableBytes <= maxBody else {
                finish(UpstreamClient.badGateway("the upstream's body is larger than \(maxBody) bytes"))
                context.close(promise: nil)
                return
            }
            body.append(contentsOf: buffer.readableBytesView)
        case .end:
            guard let head else { return }
            let noBody = head.status.code == 304 || head.status.code == 204
            let fields = CDNCacheControl.forCache(UpstreamClient.endToEnd(head.headers))
            finish(HTTPAnswer(status: Int(head.status.code), fields: fields, body: noBody ? nil : ProxyBody.value(body)))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        let why: String
        switch error {
        case let parserError as HTTPParserError where parserError == .headerOverflow: why = "the upstream's header fields are larger than \(maxHeader) bytes"
        case is HTTPParserError: why = "the upstream's answer is not HTTP/1.1 (\(error))"
        case let tlsError as NIOSSLError where tlsError == .uncleanShutdown:
            why = head == nil ? "the upstream closed the TLS connection without an answer"
                              : "the upstream closed the TLS connection before the end of its answer"
        case is NIOSSLError, is NIOSSLExtraError, is BoringSSLError: why = "TLS with the upstream failed: " + Self.tlsReason(error)
        default: why = "\(error)"
        }
        finish(UpstreamClient.badGateway(why))
        context.close(promise: nil)
    }

    /// A TLS error in a few words: BoringSSL's reason names (`CERTIFICATE_VERIFY_FAILED`) when it
    /// gives some, without the source paths its errors carry; else the error as NIOSSL says it.
    static func tlsReason(_ error: Error) -> String {
        let text = "\(error)"
        let parts = text.split(separator: ":")
        var reasons: [String] = []
        for (i, part) in parts.enumerated() where part.hasSuffix("OPENSSL_internal") && i + 1 < parts.count {
            let reason = parts[i + 1].prefix { $0 != " " && $0 != "]" && $0 != ")" && $0 != "," }
            if !reason.isEmpty && !reasons.contains(String(reason)) { reasons.append(String(reason)) }
        }
        guard !reasons.isEmpty else { return text }
        let handshake = (error as? NIOSSLError).map { if case .handshakeFailed = $0 { true } else { false } } ?? false
        return (handshake ? "handshake failed (" : "(") + reasons.joined(separator: ", ") + ")"
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(UpstreamClient.badGateway(head == nil ? "the upstream closed the connection without an answer"
                                                     : "the upstream closed the connection before the end of its answer"))
    }
}

extension Substring {
    var trimmingSpaces: Substring {
        var s = self
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return s
    }
}
