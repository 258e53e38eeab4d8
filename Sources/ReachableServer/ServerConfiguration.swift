/// How the HTTP side of reachd behaves. Defaults are what `reachd` serves.
public struct ServerConfiguration: Sendable {
    /// When `/readyz` passes.
    public enum ReadinessPolicy: String, Sendable, CaseIterable {
        /// Only while the network is reachable: keeps a pod out of rotation while it is cut off.
        case reachable
        /// Whenever the process serves (reachd's own readiness, not the network's).
        case always
    }

    public var host: String = "0.0.0.0"
    /// 0 asks the kernel for a free port (tests); `ReachabilityServer.port` tells which.
    public var port: Int = 9478
    /// Seconds between SSE comment lines that keep proxies from closing idle streams.
    public var heartbeat: Double = 15
    public var readiness: ReadinessPolicy = .reachable
    /// Open connections at most; SSE clients count. libmicrohttpd's own default is 1020.
    public var maxConnections: Int = 10_000
    /// 0 = no per-address limit (the default: behind an ingress every client has its address).
    public var maxConnectionsPerIP: Int = 0
    /// Seconds an idle non-streaming connection (keep-alive, slow sender) may stay open.
    public var connectionTimeout: Int = 30
    /// Bytes of request memory per connection: bounds header size (larger gets 431).
    public var connectionMemoryLimit: Int = 16 * 1024
    /// Seconds the graceful shutdown may take before stragglers are cut.
    public var shutdownTimeout: Double = 10
    /// libmicrohttpd worker threads, each with its own epoll loop.
    public var threads: Int = 2
    /// The `retry:` reconnect delay (ms) sent to SSE clients first; the final one adds jitter.
    public var retryMilliseconds: Int = 2000

    public init() {}
}
