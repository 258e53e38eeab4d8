import FoundationEssentials

/// Reading the wire document back, for the client commands (`reachd status`, `watch`) and the
/// tests that check the encoder. Writing has one implementation only: `jsonBytes()`.
extension ReachabilityStatus: Decodable {
    private enum Keys: String, CodingKey {
        case state, ipv4, ipv6, transport, isDataMetered, interfaces, targets, connectivity, dns, targetsFile, sequence,
            changedAt, stateSince
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        path = NetworkPath(
            state: try container.decode(NetworkPath.State.self, forKey: .state),
            ipv4: try container.decode(Bool.self, forKey: .ipv4),
            ipv6: try container.decode(Bool.self, forKey: .ipv6),
            transport: try container.decode(TransportSet.self, forKey: .transport),
            isDataMetered: try container.decode(Bool.self, forKey: .isDataMetered),
            interfaces: try container.decode([InterfaceStatus].self, forKey: .interfaces)
        )
        sequence = try container.decode(UInt64.self, forKey: .sequence)
        changedAt = try Self.timestampStyle.parse(try container.decode(String.self, forKey: .changedAt))
        // Absent in documents of reachd before targets existed: none, and disabled.
        targets = try container.decodeIfPresent([TargetStatus].self, forKey: .targets) ?? []
        connectivity =
            try container.decodeIfPresent(ConnectivityStatus.self, forKey: .connectivity)
            ?? .disabled(since: changedAt)
        dns = try container.decodeIfPresent(DNSStatus.self, forKey: .dns) ?? .disabled(since: changedAt)
        targetsFile = try container.decodeIfPresent(TargetsFileStatus.self, forKey: .targetsFile)
        // Absent before reachd told it: the document's own time is the best known bound.
        stateSince =
            try container.decodeIfPresent(String.self, forKey: .stateSince).map { try Self.timestampStyle.parse($0) }
            ?? changedAt
    }
}

extension TargetStatus: Decodable {
    private enum Keys: String, CodingKey {
        case name, url, state, reason, detail, addresses, interface, since, ipv4, ipv6, degraded
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        self.init(
            name: try container.decode(String.self, forKey: .name),
            url: try container.decode(String.self, forKey: .url),
            state: try container.decode(State.self, forKey: .state),
            reason: try container.decodeIfPresent(ProbeFailureReason.self, forKey: .reason),
            detail: try container.decodeIfPresent(String.self, forKey: .detail),
            addresses: try container.decode([String].self, forKey: .addresses),
            interface: try container.decodeIfPresent(String.self, forKey: .interface),
            since: try ReachabilityStatus.timestampStyle.parse(try container.decode(String.self, forKey: .since)),
            ipv4: try container.decodeIfPresent(TargetFamilyStatus.self, forKey: .ipv4),
            ipv6: try container.decodeIfPresent(TargetFamilyStatus.self, forKey: .ipv6),
            degraded: try container.decodeIfPresent(Bool.self, forKey: .degraded) ?? false
        )
    }
}

extension TargetFamilyStatus: Decodable {
    private enum Keys: String, CodingKey {
        case state, reason, detail, address, interface
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        self.init(
            state: try container.decode(TargetStatus.State.self, forKey: .state),
            reason: try container.decodeIfPresent(ProbeFailureReason.self, forKey: .reason),
            detail: try container.decodeIfPresent(String.self, forKey: .detail),
            address: try container.decodeIfPresent(String.self, forKey: .address),
            interface: try container.decodeIfPresent(String.self, forKey: .interface)
        )
    }
}

extension ConnectivityStatus: Decodable {
    private enum Keys: String, CodingKey {
        case state, url, reason, since, ipv4, ipv6, degraded
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        self.init(
            state: try container.decode(State.self, forKey: .state),
            url: try container.decodeIfPresent(String.self, forKey: .url),
            reason: try container.decodeIfPresent(ProbeFailureReason.self, forKey: .reason),
            since: try ReachabilityStatus.timestampStyle.parse(try container.decode(String.self, forKey: .since)),
            ipv4: try container.decodeIfPresent(ConnectivityFamilyStatus.self, forKey: .ipv4),
            ipv6: try container.decodeIfPresent(ConnectivityFamilyStatus.self, forKey: .ipv6),
            degraded: try container.decodeIfPresent(Bool.self, forKey: .degraded) ?? false
        )
    }
}

extension ConnectivityFamilyStatus: Decodable {
    private enum Keys: String, CodingKey {
        case state, reason, detail
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        self.init(
            state: try container.decode(ConnectivityStatus.State.self, forKey: .state),
            reason: try container.decodeIfPresent(ProbeFailureReason.self, forKey: .reason),
            detail: try container.decodeIfPresent(String.self, forKey: .detail)
        )
    }
}

extension DNSStatus: Decodable {
    private enum Keys: String, CodingKey {
        case state, name, reason, since, servers
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        self.init(
            state: try container.decode(State.self, forKey: .state),
            name: try container.decodeIfPresent(String.self, forKey: .name),
            reason: try container.decodeIfPresent(DNSFailureReason.self, forKey: .reason),
            since: try ReachabilityStatus.timestampStyle.parse(try container.decode(String.self, forKey: .since)),
            servers: try container.decode([NameserverStatus].self, forKey: .servers)
        )
    }
}

extension NameserverStatus: Decodable {
    private enum Keys: String, CodingKey {
        case address, state, reason, since
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        self.init(
            address: try container.decode(String.self, forKey: .address),
            state: try container.decode(State.self, forKey: .state),
            reason: try container.decodeIfPresent(DNSFailureReason.self, forKey: .reason),
            since: try ReachabilityStatus.timestampStyle.parse(try container.decode(String.self, forKey: .since))
        )
    }
}

extension TargetStatus.State: Decodable {}
extension DNSStatus.State: Decodable {}
extension NameserverStatus.State: Decodable {}
extension DNSFailureReason: Decodable {}
extension ConnectivityStatus.State: Decodable {}
extension ProbeFailureReason: Decodable {}

extension InterfaceStatus: Decodable {
    private enum Keys: String, CodingKey {
        case name, index, transport, kind, operState, isDefaultRoute, addresses
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        self.init(
            name: try container.decode(String.self, forKey: .name),
            index: try container.decode(Int32.self, forKey: .index),
            transport: try container.decode(Transport.self, forKey: .transport),
            kind: try container.decodeIfPresent(String.self, forKey: .kind),
            operState: try container.decode(String.self, forKey: .operState),
            isDefaultRoute: try container.decode(Bool.self, forKey: .isDefaultRoute),
            addresses: try container.decode([String].self, forKey: .addresses)
        )
    }
}

extension TransportSet: Decodable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: TransportKey.self)
        self.init()
        for transport in Transport.allCases where try container.decode(Bool.self, forKey: TransportKey(transport)) {
            insert(transport)
        }
    }

    private struct TransportKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ transport: Transport) { stringValue = transport.rawValue }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

extension Transport: Decodable {}
extension NetworkPath.State: Decodable {}

extension TargetsFileStatus: Decodable {
    private enum Keys: String, CodingKey {
        case path, appliedAt, error
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        self.init(
            path: try container.decode(String.self, forKey: .path),
            appliedAt: try ReachabilityStatus.timestampStyle.parse(
                try container.decode(String.self, forKey: .appliedAt)),
            error: try container.decodeIfPresent(String.self, forKey: .error)
        )
    }
}
