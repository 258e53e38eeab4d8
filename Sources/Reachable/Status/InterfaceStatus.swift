/// One network interface as the status document shows it (informational: reachability itself
/// comes from the kernel's route lookups, not from this list).
public struct InterfaceStatus: Sendable, Equatable, Codable {
    public var name: String
    public var index: Int32
    public var transport: Transport
    /// `IFLA_INFO_KIND` (`veth`, `bridge`, `wireguard`, …); `null` for plain hardware.
    public var kind: String?
    /// The kernel's RFC 2863 operational state: `up`, `down`, `unknown`, `dormant`, …
    public var operState: String
    /// Carries a unicast default route in any routing table.
    public var isDefaultRoute: Bool
    /// Every address as `address/prefix`, link-local ones included.
    public var addresses: [String]

    public init(
        name: String, index: Int32, transport: Transport, kind: String?, operState: String,
        isDefaultRoute: Bool, addresses: [String]
    ) {
        self.name = name
        self.index = index
        self.transport = transport
        self.kind = kind
        self.operState = operState
        self.isDefaultRoute = isDefaultRoute
        self.addresses = addresses
    }

    private enum CodingKeys: String, CodingKey {
        case name, index, transport, kind, operState, isDefaultRoute, addresses
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(index, forKey: .index)
        try container.encode(transport, forKey: .transport)
        // Always present, `null` when the kernel names no kind: a stable shape for clients.
        try container.encode(kind, forKey: .kind)
        try container.encode(operState, forKey: .operState)
        try container.encode(isDefaultRoute, forKey: .isDefaultRoute)
        try container.encode(addresses, forKey: .addresses)
    }
}
