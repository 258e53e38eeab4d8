/// Counters a test or an operator can read to see what the source has done.
public struct SourceStatistics: Sendable, Equatable {
    /// Times the thread woke because the event socket had something.
    public var wakeUps = 0
    /// Valid messages read from the event socket.
    public var messages = 0
    /// Messages skipped as malformed, on either socket.
    public var malformedMessages = 0
    /// Full dumps after the kernel said events were lost (`ENOBUFS`).
    public var resyncs = 0
    /// Interfaces whose routes were re-read after a possible silent flush.
    public var routeRereads = 0
    /// Times the kernel connection broke and both sockets were reopened successfully.
    public var reconnects = 0
    /// Route lookups that failed for a passing reason (`EBUSY`, a timeout) and were asked again.
    public var transientLookupFailures = 0
    /// Times a lookup found the kernel still matching a route it had announced removed, and
    /// waited before asking again (`RemovedRoutes`).
    public var staleLookups = 0
    /// Route questions of a batch answered by the lookup of another address in the same group
    /// (`RoutePrefixes`), without asking the kernel.
    public var groupedRouteQuestions = 0

    public init() {}
}
