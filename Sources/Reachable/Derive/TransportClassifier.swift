/// Decides an interface's transport in NetworkManager's order: the link kind first, then the
/// hardware type, then sysfs, and only then plain Ethernet.
public struct TransportClassifier: Sendable {
    public let facts: any InterfaceFacts

    public init(facts: any InterfaceFacts = SysfsInterfaceFacts()) {
        self.facts = facts
    }

    /// Link kinds that are `other`: tunnels, VPNs, overlays, and devices with no traffic of their own.
    private static let tunnelKinds: Set<String> = [
        "tun", "tap", "wireguard", "ipip", "gre", "gretap", "ip6gre", "ip6gretap", "sit", "vti", "vti6", "ip6tnl",
        "ppp", "vxlan", "geneve",
        // Traffic-shaping devices: an `ifb` carries no traffic of its own (it mirrors another
        // interface's ingress), even though it reports Ethernet hardware.
        "ifb",
    ]
    private static let ethernetKinds: Set<String> = [
        "veth", "bridge", "bond", "team", "vlan", "macvlan", "macvtap", "ipvlan", "ipvtap", "dummy",
    ]

    public func transport(of link: LinkRecord) -> Transport {
        if let kind = link.kind {
            if Self.tunnelKinds.contains(kind) { return .other }
            if Self.ethernetKinds.contains(kind) { return .ethernet }
        }
        switch link.hardwareType {
        case KernelValue.rawIP:
            return .cellular
        case let type where KernelValue.pointToPointKinds.contains(type):
            return .other
        case KernelValue.ether:
            switch facts.deviceType(of: link.name) {
            case "wlan": return .wifi
            case "wwan": return .cellular
            default: break
            }
            return facts.hasWirelessPhy(link.name) ? .wifi : .ethernet
        default:
            return .other
        }
    }
}
