public import FoundationEssentials
public import Reachable

/// What the outbound probes do: the targets (`--target`), the connectivity check
/// (`--connectivity-url`) and the nameserver check (`--dns-check`). With none configured, reachd
/// sends nothing anywhere and starts no probe thread.
public struct ProbeConfiguration: Sendable {
    /// In configuration order, names unique (`TargetSpec.parseList` checks): the `--target`
    /// flags', then the targets file's.
    public var targets: [TargetSpec] = []
    /// `--targets-file`: read again on SIGHUP and whenever it changes (`targets` holds what it
    /// said at start). With one, the targets are probed even while it lists none.
    public var targetsFile: TargetsFile?
    /// How often a target is probed when nothing changes (`--target-interval`).
    public var targetInterval: Duration = .seconds(10)
    /// Per probe, name resolution included (`--target-timeout`).
    public var targetTimeout: Duration = .seconds(3)
    /// Consecutive failed probes before a reachable target turns unreachable (`--target-failures`).
    public var targetFailures: Int = 3
    /// Consecutive successful probes before an unreachable target family turns reachable again
    /// (`--target-successes`; the first result after start decides at once).
    public var targetSuccesses: Int = 1
    /// Small echoes per `icmp://` probe (`--icmp-count`, at least 1).
    public var icmpCount: Int = 3
    /// Probes per family in the quality window (`--quality-window`).
    public var qualityWindow: Int = 10
    /// Window loss above this ratio is `loss` (`--max-loss`).
    public var maxLoss: Double = 0.2
    /// Window median round trip above this is `latency` (`--max-rtt`); `nil`: off.
    public var maxRoundTrip: Duration?

    /// The quality rules, with the flap counts of the targets' thresholds.
    public var qualityLimits: QualityLimits {
        QualityLimits(
            window: qualityWindow, maxLoss: maxLoss, maxRoundTrip: maxRoundTrip, toAppear: targetFailures,
            toClear: targetSuccesses)
    }

    /// The kinds of the targets, in registration order.
    var kinds: [any ProbeKind.Type] {
        ProbeKinds.all.filter { kind in targets.contains { ObjectIdentifier($0.url.kind) == ObjectIdentifier(kind) } }
    }

    /// `nil`: connectivity is `disabled`.
    public var connectivity: ConnectivitySpec?
    /// `--per-uplink`: the check runs through every uplink on its own too (needs `connectivity`).
    public var perUplink = false
    /// How often the check runs while `full` (`--connectivity-interval`); shorter otherwise,
    /// backing off from 1 s.
    public var connectivityInterval: Duration = .seconds(300)
    /// Per check (`--connectivity-timeout`).
    public var connectivityTimeout: Duration = .seconds(5)
    /// The name every nameserver is asked for (`--dns-check`, exactly as given); `nil`: DNS is
    /// `disabled`.
    public var dnsCheck: String?
    /// How often each nameserver is asked when nothing changes (`--dns-interval`).
    public var dnsInterval: Duration = .seconds(10)
    /// Per query (`--dns-timeout`).
    public var dnsTimeout: Duration = .seconds(2)
    /// Consecutive failed queries before an answering server turns failing (`--dns-failures`).
    public var dnsFailures: Int = 3
    /// Where names are resolved from (re-read when it changes).
    public var resolver = ResolverConfiguration()
    /// Which proxy carries the `http(s)://` checks (`--proxy`, else the environment's).
    public var proxies = ProxyChoice.never

    public init() {}

    /// The targets as the first document lists them: all `unknown`, `since` the start (an IP
    /// literal with its address), exactly as their books begin.
    public func initialTargets(since: Date) -> [TargetStatus] {
        targets.map { TargetBook(spec: $0, since: since, proxy: proxies.proxy(for: $0.url, via: $0.egress)).status }
    }

    /// The targets file as the first document shows it: applied at start (the command line read
    /// it), or `nil` without one.
    public func initialTargetsFile(since: Date) -> TargetsFileStatus? {
        targetsFile.map { TargetsFileStatus(path: $0.path, appliedAt: since) }
    }

    /// Connectivity as the first document shows it: `unknown` with its URL, or `disabled`.
    public func initialConnectivity(since: Date) -> ConnectivityStatus {
        connectivity.map {
            ConnectivityStatus(state: .unknown, url: $0.url.text, proxy: connectivityProxy?.shown, since: since)
        }
            ?? .disabled(since: since)
    }

    /// What carries the connectivity check (never an uplink's, which is pinned).
    var connectivityProxy: ProxyURL? {
        connectivity.flatMap { proxies.proxy(for: $0.url) }
    }

    /// DNS as the first document shows it: `unknown` with its name, or `disabled`.
    public func initialDNS(since: Date) -> DNSStatus {
        dnsCheck.map { DNSStatus(state: .unknown, name: $0, since: since) } ?? .disabled(since: since)
    }

    /// Whether anything is configured at all.
    public var isEmpty: Bool { targets.isEmpty && targetsFile == nil && connectivity == nil && dnsCheck == nil }
}
