public import FoundationEssentials
public import Reachable

/// What the outbound probes do: the targets (`--target`) and the connectivity check
/// (`--connectivity-url`). With neither configured, reachd sends nothing anywhere and starts
/// no probe thread.
public struct ProbeConfiguration: Sendable {
    /// In configuration order, names unique (`TargetSpec.parseList` checks).
    public var targets: [TargetSpec] = []
    /// How often a target is probed when nothing changes (`--target-interval`).
    public var targetInterval: Duration = .seconds(10)
    /// Per probe, name resolution included (`--target-timeout`).
    public var targetTimeout: Duration = .seconds(3)
    /// Consecutive failed probes before a reachable target turns unreachable (`--target-failures`).
    public var targetFailures: Int = 3
    /// `nil`: connectivity is `disabled`.
    public var connectivity: ConnectivitySpec?
    /// How often the check runs while `full` (`--connectivity-interval`); shorter otherwise,
    /// backing off from 1 s.
    public var connectivityInterval: Duration = .seconds(300)
    /// Per check (`--connectivity-timeout`).
    public var connectivityTimeout: Duration = .seconds(5)
    /// Where names are resolved from (re-read when it changes).
    public var resolver = ResolverConfiguration()

    public init() {}

    /// The targets as the first document lists them: all `unknown`, `since` the start.
    public func initialTargets(since: Date) -> [TargetStatus] {
        targets.map { TargetStatus(name: $0.name, url: $0.url.text, since: since) }
    }

    /// Connectivity as the first document shows it: `unknown` with its URL, or `disabled`.
    public func initialConnectivity(since: Date) -> ConnectivityStatus {
        connectivity.map { ConnectivityStatus(state: .unknown, url: $0.url.text, since: since) }
            ?? .disabled(since: since)
    }

    /// Whether anything is configured at all.
    public var isEmpty: Bool { targets.isEmpty && connectivity == nil }
}
