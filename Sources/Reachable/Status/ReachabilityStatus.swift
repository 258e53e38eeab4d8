public import FoundationEssentials

/// The status document: the wire contract of `/status` and of every `/events` frame.
///
/// Field names and meanings are fixed by the contract (docs/status-document.md, openapi.yaml); new fields may be
/// added, none renamed. To add one: a property here (with its source's `update`), a line in
/// the encoder (`ReachabilityStatus+JSON.swift`), and one in the decoder the client commands use.
public struct ReachabilityStatus: Sendable, Equatable {
    /// The route-based part, from the kernel: `state`, families, transports, interfaces.
    public var path: NetworkPath
    /// Per-host reachability, in configuration order (empty when none are configured).
    public var targets: [TargetStatus]
    /// The internet check (`disabled` unless configured).
    public var connectivity: ConnectivityStatus
    /// Each nameserver asked on its own (`disabled` unless `--dns-check`).
    public var dns: DNSStatus
    /// The `--targets-file` and whether its last read was applied; `nil` without one.
    public var targetsFile: TargetsFileStatus?
    /// Increases by one on every change of the document; the SSE event id.
    public var sequence: UInt64
    public var changedAt: Date
    /// When the route-based `state` last changed (`changedAt` moves with any change, a target's
    /// say): what "reachable since …" means. Set by the monitor with `changedAt`.
    public var stateSince: Date

    public init(
        path: NetworkPath, targets: [TargetStatus] = [], connectivity: ConnectivityStatus? = nil,
        dns: DNSStatus? = nil, sequence: UInt64, changedAt: Date
    ) {
        self.path = path
        self.targets = targets
        self.connectivity = connectivity ?? .disabled(since: changedAt)
        self.dns = dns ?? .disabled(since: changedAt)
        self.sequence = sequence
        self.changedAt = changedAt
        stateSince = changedAt
    }

    public var state: NetworkPath.State { path.state }
    public var isReachable: Bool { path.isReachable }

    /// Equal apart from the bookkeeping (`sequence`, `changedAt`, `stateSince`): a subscriber would see no
    /// difference, so the monitor publishes nothing.
    public func hasSameContent(as other: ReachabilityStatus) -> Bool {
        var aligned = self
        aligned.sequence = other.sequence
        aligned.changedAt = other.changedAt
        aligned.stateSince = other.stateSince
        return aligned == other
    }

    /// Milliseconds and a `Z`, as in the contract's example: `2026-11-21T22:00:00.123Z`.
    public static let timestampStyle = Timestamp()
}
