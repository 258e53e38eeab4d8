import CProbeLibraries

/// One kind of work the engine loop drives: descriptors to wait on, what to do when they are
/// ready, and when to wake regardless. libcurl's transfers (`CurlTransfers`), the c-ares
/// channels (`AresChannels`, for the resolver and the nameserver check) and the file watches
/// are drivers; a probe kind with sockets of its own (ICMP) adds one more. Engine thread only.
protocol EngineDriver: AnyObject {
    /// Does what is due by `now` — the library's own timers, the queries' deadlines — before
    /// the loop sleeps.
    func processTimeouts(now: ContinuousClock.Instant)
    /// Adds the descriptors this driver waits on.
    func appendWaitDescriptors(to descriptors: inout [curl_waitfd])
    /// The earliest moment something is due even if no descriptor becomes ready.
    func nextWakeUp(now: ContinuousClock.Instant) -> ContinuousClock.Instant?
    /// Handles the ready descriptors among `descriptors` that are its own.
    func process(_ descriptors: [curl_waitfd])
    /// Ends everything under way (completions run, marked cancelled) and frees every handle.
    func shutdown()
}
