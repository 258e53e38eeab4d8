import FoundationEssentials

/// Reading the wire document back, for the client commands (`reachd status`, `watch`) and the
/// tests that check the encoder. Writing has one implementation only: `jsonBytes()`.
extension ReachabilityStatus: Decodable {
    private enum Keys: String, CodingKey {
        case state, ipv4, ipv6, transport, isDataMetered, interfaces, sequence, changedAt
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
    }
}

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
