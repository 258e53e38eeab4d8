/// How an interface reaches the network, in the vocabulary of NWPathMonitor and Android.
///
/// Unlike Apple's API, Linux can tell wired Ethernet apart, and reachd does.
public enum Transport: String, Sendable, CaseIterable, Decodable {
    case wifi
    case cellular
    case ethernet
    case other
}

/// The transports of the interfaces the outside traffic leaves through: a set, because IPv4 and
/// IPv6 may leave through different interfaces (a VPN over Wi-Fi shows both).
public struct TransportSet: Sendable, Equatable, Decodable {
    public var wifi: Bool
    public var cellular: Bool
    public var ethernet: Bool
    public var other: Bool

    public init(wifi: Bool = false, cellular: Bool = false, ethernet: Bool = false, other: Bool = false) {
        self.wifi = wifi
        self.cellular = cellular
        self.ethernet = ethernet
        self.other = other
    }

    public mutating func insert(_ transport: Transport) {
        switch transport {
        case .wifi: wifi = true
        case .cellular: cellular = true
        case .ethernet: ethernet = true
        case .other: other = true
        }
    }

    public func contains(_ transport: Transport) -> Bool {
        switch transport {
        case .wifi: wifi
        case .cellular: cellular
        case .ethernet: ethernet
        case .other: other
        }
    }
}
