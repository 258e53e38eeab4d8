/// Counters of the engine thread, read by tests (an idle engine must not wake up).
public struct EngineStatistics: Sendable, Equatable {
    /// Times the thread returned from `epoll_wait`: a descriptor, a timer or a submission.
    public var wakeUps = 0
    /// Probes started, of every kind but `dns://` (counted with the nameserver queries).
    public var probes = 0
    /// Resolutions started.
    public var resolutions = 0
    /// Questions to one nameserver alone started (the nameserver check, `dns://` targets).
    public var nameserverQueries = 0

    public init() {}

    /// The counter a task adds to when it starts (`EngineTask`).
    enum Count: Sendable {
        case probes
        case resolutions
        case nameserverQueries
    }

    mutating func count(_ counter: Count) {
        switch counter {
        case .probes: probes += 1
        case .resolutions: resolutions += 1
        case .nameserverQueries: nameserverQueries += 1
        }
    }
}
