import FoundationEssentials

/// The status document: the wire contract of `/status` and of every `/events` frame.
///
/// Field names and meanings are fixed by DESIGN.md; new fields may be added, none renamed.
public struct ReachabilityStatus: Sendable, Equatable {
    public var path: NetworkPath
    /// Increases by one on every change of `path`; the SSE event id.
    public var sequence: UInt64
    public var changedAt: Date

    public init(path: NetworkPath, sequence: UInt64, changedAt: Date) {
        self.path = path
        self.sequence = sequence
        self.changedAt = changedAt
    }

    public var state: NetworkPath.State { path.state }
    public var isReachable: Bool { path.isReachable }
}

extension ReachabilityStatus: Codable {
    private enum CodingKeys: String, CodingKey {
        case state, isReachable, ipv4, ipv6, transport, isDataMetered, interfaces, sequence, changedAt
    }

    /// Milliseconds and a `Z`, as in the contract's example: `2026-11-21T22:00:00.123Z`.
    public static let timestampStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        path = NetworkPath(
            state: try container.decode(NetworkPath.State.self, forKey: .state),
            ipv4: try container.decode(Bool.self, forKey: .ipv4),
            ipv6: try container.decode(Bool.self, forKey: .ipv6),
            transport: try container.decode(TransportSet.self, forKey: .transport),
            isDataMetered: try container.decode(Bool.self, forKey: .isDataMetered),
            interfaces: try container.decode([InterfaceStatus].self, forKey: .interfaces)
        )
        sequence = try container.decode(UInt64.self, forKey: .sequence)
        let stamp = try container.decode(String.self, forKey: .changedAt)
        changedAt = try Self.timestampStyle.parse(stamp)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(path.state, forKey: .state)
        try container.encode(path.isReachable, forKey: .isReachable)
        try container.encode(path.ipv4, forKey: .ipv4)
        try container.encode(path.ipv6, forKey: .ipv6)
        try container.encode(path.transport, forKey: .transport)
        try container.encode(path.isDataMetered, forKey: .isDataMetered)
        try container.encode(path.interfaces, forKey: .interfaces)
        try container.encode(sequence, forKey: .sequence)
        try container.encode(Self.timestampStyle.format(changedAt), forKey: .changedAt)
    }
}
