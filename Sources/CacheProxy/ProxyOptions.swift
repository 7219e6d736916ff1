import CacheCore

/// The bounds of `cachesh proxy` (docs/SPEC.md §7.1): every read and every wait is bounded.
public struct ProxyLimits: Sendable, Equatable {
    /// The most bytes of header field names and values in a request (431 past it), and in an
    /// upstream response (502 past it).
    public var maxHeaderBytes = 32 * 1024
    /// The most bytes of a request body (413 past it) and of an upstream response body (502).
    public var maxBodyBytes = 8 * 1024 * 1024
    /// The most client connections open at once; one more is closed at once, with a log line.
    public var maxConnections = 4096
    /// How long an upstream request may take, connecting included, before it is a 504 (ms).
    public var upstreamTimeoutMs: Int64 = 30_000
    /// How long a client connection may sit idle between requests before it is closed (ms).
    public var idleTimeoutMs: Int64 = 60_000
    /// The most responses kept (the `proxy` namespace's `max=` unless a configuration sets one).
    public var maxEntries = 10_000

    public init() {}
}

/// Where `cachesh proxy --inspect` takes `cachesh attach` (SPEC §9).
public enum ProxyInspect: Sendable, Equatable {
    /// `--inspect` alone: the inspector's default socket, `/tmp/cachesh-$UID/PID`.
    case defaultSocket
    /// `--inspect PATH`: a Unix-domain socket there.
    case socket(String)
    /// `--inspect 127.0.0.1:PORT`: a loopback TCP port (0: one the system picks), with a token.
    case loopback(port: UInt16)

    /// The place `--inspect`'s value names (nil: the default socket); nil for a bad one.
    init?(_ value: String?) {
        guard let value else { self = .defaultSocket; return }
        if value.contains("/") {
            self = .socket(value)
        } else if value.hasPrefix("127.0.0.1:"), let port = UInt16(value.dropFirst("127.0.0.1:".count)) {
            self = .loopback(port: port)
        } else {
            return nil
        }
    }
}

/// What `cachesh proxy` was asked for (docs/SPEC.md §6).
public struct ProxyOptions: Sendable {
    public var listenHost = "127.0.0.1"
    public var listenPort = 8001
    public var upstreamHost = "127.0.0.1"
    public var upstreamPort = 80
    /// `host[:port]` as the upstream URL gave it.
    public var upstreamAuthority = "127.0.0.1"
    /// `https://` upstreams: TLS (SNI, the certificate verified against the system's trust roots
    /// and `upstreamCAFile`'s).
    public var upstreamTLS = false
    /// `--upstream-ca FILE`: PEM certificates trusted beside the system's, for an HTTPS upstream.
    public var upstreamCAFile: String?

    /// The upstream's URL without a path: `https://api.example.com`.
    public var upstreamOrigin: String { (upstreamTLS ? "https://" : "http://") + upstreamAuthority }
    /// A shared cache (RFC 9111 §3.5) unless `--private`.
    public var shared = true
    /// Where each request's log line goes; nil: standard error.
    public var logPath: String?
    /// `--record FILE`: the transcript of the session, written when the proxy stops.
    public var recordPath: String?
    /// `--inspect [PATH|127.0.0.1:PORT]`: where the proxy's cache takes `cachesh attach`; nil:
    /// nowhere (nothing listens unless asked).
    public var inspect: ProxyInspect?
    /// The configuration `--config` loaded, if any.
    public var configuration: CacheConfiguration?
    public var limits = ProxyLimits()

    public init() {}

    /// The namespace the proxy keeps its responses in.
    public static let namespace = "proxy"

    /// The usage line.
    public static let usage = "cachesh proxy [--listen HOST:PORT] --upstream http[s]://HOST[:PORT] [--upstream-ca FILE] [--private] [--config FILE] [--log FILE] [--record FILE] [--upstream-timeout DURATION] [--inspect [PATH|127.0.0.1:PORT]]"

    /// Reads the arguments after `proxy`; the configuration file is read by the caller
    /// (`configPath`). - Returns: the options, or the error message (bad usage).
    public static func parse(_ arguments: [String]) -> Result<(ProxyOptions, configPath: String?), ProxyUsageError> {
        var options = ProxyOptions()
        var configPath: String?
        var upstream: String?
        var seen: Set<String> = []
        var i = 0
        func fail(_ message: String) -> Result<(ProxyOptions, configPath: String?), ProxyUsageError> { .failure(ProxyUsageError(message)) }
        while i < arguments.count {
            var name = arguments[i]
            var value: String?
            if let eq = name.firstIndex(of: "="), name.hasPrefix("--") {
                value = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            i += 1
            guard seen.insert(name).inserted else { return fail("proxy: option \(name) given twice") }
            switch name {
            case "--private":
                guard value == nil else { return fail("proxy: --private takes no value") }
                options.shared = false
                continue
            case "--inspect":
                // Its value is optional: the next argument, unless that is an option.
                if value == nil, i < arguments.count, !arguments[i].hasPrefix("-") {
                    value = arguments[i]
                    i += 1
                }
                guard let inspect = ProxyInspect(value) else {
                    return fail("proxy: --inspect \(value ?? ""): give a socket PATH (with a /) or 127.0.0.1:PORT (loopback only; port 0 picks a free one)")
                }
                options.inspect = inspect
                continue
            case "--listen", "--upstream", "--upstream-ca", "--config", "--log", "--record", "--upstream-timeout":
                if value == nil {
                    guard i < arguments.count else { return fail("proxy: \(name) needs a value") }
                    value = arguments[i]
                    i += 1
                }
            case "-h", "--help":
                return fail("usage: \(usage)")
            default:
                return fail("proxy: unknown option \(name) (usage: \(usage))")
            }
            let text = value!
            switch name {
            case "--listen":
                guard let (host, port) = hostPort(text, defaultPort: nil) else {
                    return fail("proxy: --listen \(text): give HOST:PORT (as 127.0.0.1:8001; port 0 picks a free one)")
                }
                (options.listenHost, options.listenPort) = (host, port)
            case "--upstream": upstream = text
            case "--upstream-ca":
                guard !text.isEmpty else { return fail("proxy: --upstream-ca needs a file name") }
                options.upstreamCAFile = text
            case "--config": configPath = text
            case "--record":
                guard !text.isEmpty else { return fail("proxy: --record needs a file name") }
                options.recordPath = text
            case "--upstream-timeout":
                guard let ms = TimeText.parseDuration(Substring(text)), ms > 0, ms <= 3_600_000 else {
                    return fail("proxy: --upstream-timeout \(text): give a duration from 1ms to 1h (as 30s)")
                }
                options.limits.upstreamTimeoutMs = ms
            default: options.logPath = text
            }
        }
        guard let upstream else { return fail("proxy: --upstream http[s]://HOST[:PORT] is required (usage: \(usage))") }
        let lower = upstream.lowercased()
        guard let scheme = ["http://", "https://"].first(where: { lower.hasPrefix($0) }) else {
            return fail("proxy: --upstream \(upstream): give http://HOST[:PORT] or https://HOST[:PORT]")
        }
        options.upstreamTLS = scheme == "https://"
        if options.upstreamCAFile != nil && !options.upstreamTLS {
            return fail("proxy: --upstream-ca is for an https:// upstream")
        }
        var authority = String(upstream.dropFirst(scheme.count))
        if authority.hasSuffix("/") { authority.removeLast() }
        guard !authority.contains("/"), let (host, port) = hostPort(authority, defaultPort: options.upstreamTLS ? 443 : 80), port > 0 else {
            return fail("proxy: --upstream \(upstream): give \(scheme)HOST[:PORT], with no path")
        }
        (options.upstreamHost, options.upstreamPort, options.upstreamAuthority) = (host, port, authority)
        return .success((options, configPath))
    }

    /// `host:port` (`[v6]:port` too); the port from 0 to 65535.
    static func hostPort(_ text: String, defaultPort: Int?) -> (String, Int)? {
        var host = Substring(text)
        var port = defaultPort
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let rest = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let p = Int(rest.dropFirst()) else { return nil }
                port = p
            }
        } else if let colon = host.lastIndex(of: ":") {
            guard let p = Int(host[host.index(after: colon)...]) else { return nil }
            port = p
            host = host[..<colon]
        }
        guard let port, (0...65535).contains(port), !host.isEmpty,
              host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == ":") }) else { return nil }
        return (String(host), port)
    }
}

/// Bad usage of `cachesh proxy`: the message, exit 2.
public struct ProxyUsageError: Error, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
}
