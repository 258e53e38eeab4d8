/// Where and how the resolver asks DNS.
public struct ResolverConfiguration: Sendable, Equatable {
    /// The resolver configuration to read (and to watch for changes). `ip netns exec` bind-mounts a
    /// namespace's own file over `/etc/resolv.conf`; tests point this at a file of their own.
    public var resolvConfPath: String
    /// A port for every `nameserver` in the file instead of 53. c-ares 1.18 reads no port from
    /// `resolv.conf`, and a test's DNS server cannot bind 53 beside the host's; `nil` in production.
    public var serverPort: UInt16?
    /// How long c-ares waits for one answer before it retries (it doubles on each round). Chosen by
    /// reachd, not `options timeout:` from the file: the probe's own deadline is the real limit, and a
    /// lost UDP packet should be retried well within it.
    public var attemptTimeout: Duration
    /// How many rounds c-ares tries each server before giving up on its own.
    public var attempts: Int

    public init(
        resolvConfPath: String = "/etc/resolv.conf", serverPort: UInt16? = nil,
        attemptTimeout: Duration = .seconds(1), attempts: Int = 3
    ) {
        self.resolvConfPath = resolvConfPath
        self.serverPort = serverPort
        self.attemptTimeout = attemptTimeout
        self.attempts = attempts
    }
}
