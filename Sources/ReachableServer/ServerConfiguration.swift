public import Reachable

/// How the HTTP side of reachd behaves. Defaults are what `reachd` serves.
public struct ServerConfiguration: Sendable {
    public var host: String = "0.0.0.0"
    /// 0 asks the kernel for a free port (tests); `ReachabilityServer.port` tells which.
    public var port: Int = 9478
    /// Seconds between SSE comment lines that keep proxies from closing idle streams.
    public var heartbeat: Double = 15
    /// When `/readyz` passes (`--ready-when`): every condition holds, and shutdown has not begun.
    /// The default keeps a pod out of rotation while its network is cut off. Each condition is one
    /// check of the health document, in this order; an empty list holds whenever reachd serves.
    public var readiness: [ReadinessCondition] = [.reachable]
    /// Open connections at most; SSE clients count. libmicrohttpd's own default is 1020.
    public var maxConnections: Int = 10_000
    /// 0 = no per-address limit (the default: behind an ingress every client has its address).
    public var maxConnectionsPerIP: Int = 0
    /// Seconds an idle non-streaming connection (keep-alive, slow sender) may stay open.
    public var connectionTimeout: Int = 30
    /// Bytes of libmicrohttpd memory per connection: an idle stream holds about 17 KiB of it
    /// resident. It bounds the request head, which shares it with each header's bookkeeping: a
    /// server must take a head of 16 KiB (RFC 9112 framing, as Node's default), and 24 KiB is the
    /// least that admits 16 KiB in a few headers or in the request line (20 KiB admitted 12 KB
    /// in one header; measured, THREAT-MODEL.md). About 200 short headers fit; more get 431.
    public var connectionMemoryLimit: Int = 24 * 1024
    /// Seconds the graceful shutdown may take before stragglers are cut.
    public var shutdownTimeout: Double = 10
    /// libmicrohttpd worker threads, each with its own poll loop.
    public var threads: Int = 2
    /// The `retry:` reconnect delay (ms) sent to SSE clients first; the final one adds jitter.
    public var retryMilliseconds: Int = 2000

    /// How many changes of the document `/changes` keeps (`--history`, at least 1), in memory.
    public var history: Int = 500

    /// Which other origins' pages may read `/status` and `/events` (`--allow-origin`).
    public var allowOrigin: CrossOriginPolicy = .none

    /// Names besides the built-in ones under which reachd answers (`--allowed-hosts`); `.any`
    /// turns the DNS rebinding check off.
    public var allowedHosts: HostPolicy = .builtIn

    /// `--web-config-file`: TLS and basic auth; `nil` serves plain HTTP to anyone.
    public var security: WebSecurity?

    public init() {}
}
