/// Counters of the engine thread, read by tests (an idle engine must not wake up) and metrics.
public struct EngineStatistics: Sendable, Equatable {
    /// Times the thread returned from `curl_multi_poll`: a descriptor, a timer or a submission.
    public var wakeUps = 0
    /// Probe jobs taken from the inbox.
    public var probes = 0
    /// Resolutions taken from the inbox.
    public var resolutions = 0
    /// Nameserver queries taken from the inbox (the nameserver check).
    public var nameserverQueries = 0

    public init() {}
}
