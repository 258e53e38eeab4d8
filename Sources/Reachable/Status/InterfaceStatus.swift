/// One network interface as the status document shows it (informational: reachability itself
/// comes from the kernel's route lookups, not from this list).
public struct InterfaceStatus: Sendable, Equatable, Decodable {
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
    /// The connectivity check through this interface alone (`--per-uplink`); `nil` when that is
    /// off or the interface is an uplink of no family. Not the kernel's: the netlink source
    /// leaves it `nil`, the uplink checker sets it (`ReachabilityStatus.path` keeps it).
    public var connectivity: ConnectivityStatus?

    public init(
        name: String, index: Int32, transport: Transport, kind: String?, operState: String,
        isDefaultRoute: Bool, addresses: [String], connectivity: ConnectivityStatus? = nil
    ) {
        self.name = name
        self.index = index
        self.transport = transport
        self.kind = kind
        self.operState = operState
        self.isDefaultRoute = isDefaultRoute
        self.addresses = addresses
        self.connectivity = connectivity
    }
}
