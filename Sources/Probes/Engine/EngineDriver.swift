/// One kind of work the engine loop drives: it watches its descriptors on the loop
/// (`EventLoop.watch`, told through `DescriptorOwner.ready`), does what is due each turn, and
/// says when to wake regardless. libcurl's transfers (`CurlTransfers`), the resolver and the
/// nameserver queries (c-ares channels), `icmp://`'s echoes and the file watches are drivers. The
/// engine makes a driver the first time a task names it (`EngineDrivers`), so a kind that needs
/// sockets of its own brings its driver with it and the engine names none. Engine thread only.
protocol EngineDriver: AnyObject {
    /// Made on the engine thread, from what the engine was started with.
    init(settings: EngineSettings)
    /// Does what is due by `now` — the library's own timers, the queries' deadlines, the
    /// completions of what its ready descriptors finished — before the loop sleeps.
    func processTimeouts(now: ContinuousClock.Instant)
    /// The earliest moment something is due even if no descriptor becomes ready.
    func nextWakeUp(now: ContinuousClock.Instant) -> ContinuousClock.Instant?
    /// Ends everything under way (completions run, marked cancelled) and frees every handle.
    func shutdown()
}

/// What the engine was started with, for the drivers it makes (`ProbeEngine.init`).
struct EngineSettings: Sendable {
    /// The loop the drivers watch their descriptors on.
    let loop: EventLoop
    /// A PEM bundle TLS servers are verified against instead of the system's CAs (tests).
    let trustedCertificates: String?
    /// Small echoes per `icmp://` probe (`--icmp-count`).
    let echoCount: Int
    /// Where DNS configuration comes from, and the nameserver check's port.
    let resolver: ResolverConfiguration
    /// Told when c-ares refuses a configuration or a server (said in the log).
    let resolverProblem: @Sendable (String) -> Void
}
