import CMnl
import Glibc
import Reachable
import Testing

/// sysfs as a test describes it: no real machine's Wi-Fi card leaks into a unit test.
struct FakeInterfaceFacts: InterfaceFacts {
    var deviceTypes: [String: String] = [:]
    var wirelessPhys: Set<String> = []

    func deviceType(of interface: String) -> String? { deviceTypes[interface] }
    func hasWirelessPhy(_ interface: String) -> Bool { wirelessPhys.contains(interface) }
}

/// Link flags as the kernel reports them for common situations.
enum LinkFlags {
    // Spelled as numbers: these come from an enum or from macros depending on the headers.
    static let broadcast: UInt32 = 0x2
    static let pointToPoint: UInt32 = 0x10
    static let noARP: UInt32 = 0x80
    static let multicast: UInt32 = 0x1000

    static let up = reachd_iff_up | broadcast | multicast
    /// Up with carrier: what `ip link` shows as `<BROADCAST,MULTICAST,UP,LOWER_UP>`.
    static let running = up | reachd_iff_running | reachd_iff_lower_up
    static let loopback = reachd_iff_up | reachd_iff_loopback | reachd_iff_running | reachd_iff_lower_up
    /// A point-to-point tunnel (tun, WireGuard): `<POINTOPOINT,NOARP,UP,LOWER_UP>`.
    static let tunnel = reachd_iff_up | pointToPoint | noARP | reachd_iff_lower_up | reachd_iff_running
}

/// Messages that recur in many tests.
enum Messages {
    static func loopback() -> [UInt8] {
        MessageBuilder.link(
            index: 1, name: "lo", flags: LinkFlags.loopback, hardwareType: ARPHRD_LOOPBACK,
            operState: UInt8(IF_OPER_UNKNOWN)
        )
    }

    static func loopbackAddresses() -> [[UInt8]] {
        [
            MessageBuilder.address(index: 1, "127.0.0.1", prefix: 8, scope: UInt8(RT_SCOPE_HOST.rawValue)),
            MessageBuilder.address(index: 1, "::1", prefix: 128, scope: UInt8(RT_SCOPE_HOST.rawValue)),
        ]
    }

    /// A container's `eth0`: a veth that is up with carrier.
    static func veth(
        index: Int32 = 2, name: String = "eth0", flags: UInt32 = LinkFlags.running,
        operState: UInt8 = UInt8(IF_OPER_UP)
    ) -> [UInt8] {
        MessageBuilder.link(index: index, name: name, flags: flags, operState: operState, kind: "veth")
    }

    static let ipv4Destination = "8.8.8.8"
    static let ipv6Destination = "2001:4860:4860::8888"
}

/// Parses messages the way the netlink source does (one datagram) and applies them to a table.
struct TableFixture {
    var parser = NetlinkParser()
    var table = NetworkTable()

    init(_ messages: [[UInt8]] = [], sourceLocation: SourceLocation = #_sourceLocation) {
        apply(messages, sourceLocation: sourceLocation)
    }

    /// Every message must parse: these are well-formed, kernel-shaped messages.
    mutating func apply(_ messages: [[UInt8]], sourceLocation: SourceLocation = #_sourceLocation) {
        let envelopes = parser.parse(messages.flatMap { $0 })
        #expect(envelopes.count == messages.count, "every message parses", sourceLocation: sourceLocation)
        #expect(parser.malformedCount == 0, sourceLocation: sourceLocation)
        #expect(parser.unknownCount == 0, sourceLocation: sourceLocation)
        for envelope in envelopes { table.apply(envelope.message) }
    }

    mutating func apply(_ message: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        apply([message], sourceLocation: sourceLocation)
    }

    /// Derives with fake sysfs facts, so the machine running the tests does not matter.
    func derive(
        ipv4: RouteLookup = .failed(errno: ENETUNREACH),
        ipv6: RouteLookup = .failed(errno: ENETUNREACH),
        facts: FakeInterfaceFacts = FakeInterfaceFacts(),
        meteredPatterns: [String] = []
    ) -> NetworkPath {
        Reachable.derive(
            table: table, lookups: RouteLookups(ipv4: ipv4, ipv6: ipv6),
            classifier: TransportClassifier(facts: facts), meteredPatterns: meteredPatterns
        )
    }
}

/// A lookup answer turned into a `RouteLookup` exactly as the requester does: parsed from the
/// bytes the kernel sends back for `ip route get`.
func lookup(
    _ destination: String, type: UInt8 = UInt8(RTN_UNICAST), via outputInterface: Int32?, source: String?,
    sourceLocation: SourceLocation = #_sourceLocation
) -> RouteLookup {
    var parser = NetlinkParser()
    let bytes = MessageBuilder.lookupAnswer(
        destination: destination, type: type, outputInterface: outputInterface, preferredSource: source
    )
    let envelopes = parser.parse(bytes)
    guard envelopes.count == 1, case .route(let route) = envelopes[0].message else {
        Issue.record("lookup answer did not parse: \(envelopes)", sourceLocation: sourceLocation)
        return .notAsked
    }
    return .route(
        type: route.type, outputInterface: route.outputInterfaces.first, preferredSource: route.preferredSource)
}

func ipv4Lookup(via interface: Int32?, source: String?, type: UInt8 = UInt8(RTN_UNICAST)) -> RouteLookup {
    lookup(Messages.ipv4Destination, type: type, via: interface, source: source)
}

func ipv6Lookup(via interface: Int32?, source: String?, type: UInt8 = UInt8(RTN_UNICAST)) -> RouteLookup {
    lookup(Messages.ipv6Destination, type: type, via: interface, source: source)
}

extension NetworkPath {
    func interface(named name: String) -> InterfaceStatus? {
        interfaces.first { $0.name == name }
    }
}
