public import FoundationEssentials
import Glibc

/// The status document: the wire contract of `/status` and of every `/events` frame.
///
/// Field names and meanings are fixed by the contract (docs/status-document.md, openapi.yaml); new fields may be
/// added, none renamed. The stored properties are the document's fields, flat as on the wire and
/// named as the contract names them, so reading it back is the compiler's synthesised `Decodable`
/// (`ReachabilityStatus(jsonBytes:)`). To add a field: a property here (with its source's
/// `update`) and its line in the encoder (`ReachabilityStatus+JSON.swift`).
public struct ReachabilityStatus: Sendable, Equatable, Decodable {
    /// The route-based state, from the kernel; `path` reads and writes it with the five fields after
    /// it (the initial values are `NetworkPath.unknown`'s, so `init` can set them through `path`).
    public var state: NetworkPath.State = .unknown
    public var ipv4 = false
    public var ipv6 = false
    public var transport = TransportSet()
    public var isDataMetered = false
    public var interfaces: [InterfaceStatus] = []
    /// Why a family has no way out (`NetworkPath.facts`): the cause's, not on the wire.
    public var pathFacts = PathFacts()
    /// The lowest failing layer; `nil` when nothing is known to be wrong. Set by the monitor on
    /// every document it publishes (`CauseRules`), never by a source.
    public var cause: Cause?
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
        self.targets = targets
        self.connectivity = connectivity ?? .disabled(since: changedAt)
        self.dns = dns ?? .disabled(since: changedAt)
        self.sequence = sequence
        self.changedAt = changedAt
        stateSince = changedAt
        self.path = path
    }

    /// The route-based part as the kernel's source derives it: `state`, families, transports,
    /// interfaces.
    public var path: NetworkPath {
        get {
            NetworkPath(
                state: state, ipv4: ipv4, ipv6: ipv6, transport: transport, isDataMetered: isDataMetered,
                interfaces: interfaces, facts: pathFacts)
        }
        set {
            state = newValue.state
            ipv4 = newValue.ipv4
            ipv6 = newValue.ipv6
            transport = newValue.transport
            isDataMetered = newValue.isDataMetered
            pathFacts = newValue.facts
            // An interface's `connectivity` is the uplink checker's, not the kernel's: it stays
            // with the interface (by name) until that checker changes it.
            let checked = Dictionary(
                interfaces.compactMap { interface in interface.connectivity.map { (interface.name, $0) } },
                uniquingKeysWith: { first, _ in first })
            interfaces = newValue.interfaces
            guard !checked.isEmpty else { return }
            for index in interfaces.indices where interfaces[index].connectivity == nil {
                interfaces[index].connectivity = checked[interfaces[index].name]
            }
        }
    }

    public var isReachable: Bool { state == .reachable }

    /// The wire's fields: `pathFacts` is reachd's own.
    private enum CodingKeys: String, CodingKey {
        case state, ipv4, ipv6, transport, isDataMetered, interfaces, cause, targets, connectivity, dns, targetsFile
        case sequence, changedAt, stateSince
    }

    /// Equal apart from the bookkeeping (`sequence`, `changedAt`, `stateSince`) and what is not on
    /// the wire (`pathFacts`, which shows only through `cause`): a subscriber would see no
    /// difference, so the monitor publishes nothing.
    public func hasSameContent(as other: ReachabilityStatus) -> Bool {
        var aligned = self
        aligned.sequence = other.sequence
        aligned.changedAt = other.changedAt
        aligned.stateSince = other.stateSince
        aligned.pathFacts = other.pathFacts
        aligned.targets = other.targets  // compared below
        return aligned == other && Self.sameEntries(targets, other.targets)
    }

    /// Entry by entry; an entry that is the very same bits as the other's (one left alone: the
    /// document shares it with the last) is not compared field by field. Equal bits are equal
    /// values (the same strings' storage, the same numbers); unequal bits are compared with `==`.
    /// Each probe result's document is compared with the last across every target, on the engine
    /// thread and under the monitor's lock (docs/scale.md).
    static func sameEntries<Entry: Equatable>(_ entries: [Entry], _ others: [Entry]) -> Bool {
        guard entries.count == others.count else { return false }
        return entries.withUnsafeBufferPointer { entries in
            others.withUnsafeBufferPointer { others in
                guard entries.baseAddress != others.baseAddress else { return true }
                let stride = MemoryLayout<Entry>.stride
                let size = MemoryLayout<Entry>.size
                let left = UnsafeRawPointer(entries.baseAddress)
                let right = UnsafeRawPointer(others.baseAddress)
                for index in 0..<entries.count {
                    if let left, let right, memcmp(left + index * stride, right + index * stride, size) == 0 {
                        continue
                    }
                    if entries[index] != others[index] { return false }
                }
                return true
            }
        }
    }

    /// Milliseconds and a `Z`, as in the contract's example: `2026-11-21T22:00:00.123Z`.
    public static let timestampStyle = Timestamp()
}
