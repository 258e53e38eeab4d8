public import Reachable

/// When to check connectivity next: the interval while `full`; otherwise 1 s, doubling up to the
/// interval, as NetworkManager does, so a portal login or a repaired uplink is noticed within seconds
/// without hammering the check URL while the network stays broken.
///
/// The caller also checks at once on every network change; it calls `reset()` then, so the backoff
/// starts again from 1 s on the new network.
public struct ConnectivitySchedule: Sendable, Equatable {
    public let interval: Duration
    public let initialBackoff: Duration
    private var backoff: Duration

    /// - Parameters:
    ///   - interval: `--connectivity-interval`.
    ///   - initialBackoff: the first delay after a check that is not `full` (1 s).
    public init(interval: Duration, initialBackoff: Duration = .seconds(1)) {
        self.interval = interval
        self.initialBackoff = min(initialBackoff, interval)
        backoff = self.initialBackoff
    }

    /// The delay before the next check, given the state the last check found.
    public mutating func delay(after state: ConnectivityStatus.State) -> Duration {
        guard state != .full else {
            backoff = initialBackoff
            return interval
        }
        let delay = backoff
        backoff = min(backoff * 2, interval)
        return delay
    }

    /// Starts the backoff again from its first step (after a network change).
    public mutating func reset() {
        backoff = initialBackoff
    }
}
