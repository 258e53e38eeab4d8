import FoundationEssentials

/// Reading the wire document back, for the client commands (`reachd status`, `watch`) and the
/// tests that check the encoder. Writing has one implementation only: `jsonBytes()`.
extension ReachabilityStatus: Decodable {
    private enum Keys: String, CodingKey {
        case state, ipv4, ipv6, transport, isDataMetered, interfaces, targets, connectivity, sequence, changedAt
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
    }
}

extension TargetStatus: Decodable {
    private enum Keys: String, CodingKey {
        case name, url, state, reason, addresses, interface, since
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        self.init(
            name: try container.decode(String.self, forKey: .name),
            url: try container.decode(String.self, forKey: .url),
            state: try container.decode(State.self, forKey: .state),
            reason: try container.decodeIfPresent(ProbeFailureReason.self, forKey: .reason),
            addresses: try container.decode([String].self, forKey: .addresses),
            interface: try container.decodeIfPresent(String.self, forKey: .interface),
            since: try ReachabilityStatus.timestampStyle.parse(try container.decode(String.self, forKey: .since))
        )
    }
}

extension ConnectivityStatus: Decodable {
    private enum Keys: String, CodingKey {
        case state, url, reason, since
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        self.init(
            state: try container.decode(State.self, forKey: .state),
            url: try container.decodeIfPresent(String.self, forKey: .url),
            reason: try container.decodeIfPresent(ProbeFailureReason.self, forKey: .reason),
            since: try ReachabilityStatus.timestampStyle.parse(try container.decode(String.self, forKey: .since))
        )
    }
}

extension TargetStatus.State: Decodable {}
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
