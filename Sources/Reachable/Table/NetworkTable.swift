/// The kernel's links, addresses and default routes as last reported: pure state, no I/O.
///
/// The netlink source applies every message it reads; `derive` reads the result.
public struct NetworkTable: Sendable, Equatable {
    public private(set) var links: [Int32: LinkRecord] = [:]
    private var addressesByKey: [AddressRecord.Key: AddressRecord] = [:]
    private var defaultRoutesByKey: [RouteRecord.Key: RouteRecord] = [:]

    public init() {}

    public var addresses: [AddressRecord] { Array(addressesByKey.values) }
    public var defaultRoutes: [RouteRecord] { Array(defaultRoutesByKey.values) }

    /// Applies one parsed message (routes the kernel flushes silently are the source's to re-read:
    /// `SilentFlushes`).
    public mutating func apply(_ message: NetlinkMessage) {
        switch message {
        case .link(let link):
            links[link.index] = link
        case .linkRemoved(let index):
            links[index] = nil
            addressesByKey = addressesByKey.filter { $0.value.interfaceIndex != index }
            defaultRoutesByKey = defaultRoutesByKey.filter { !$0.value.outputInterfaces.contains(index) }
        case .address(let address):
            addressesByKey[address.key] = address
        case .addressRemoved(let address):
            addressesByKey[address.key] = nil
        case .route(let route):
            guard route.destinationLength == 0 else { return }
            defaultRoutesByKey[route.key] = route
        case .routeRemoved(let route):
            guard route.destinationLength == 0 else { return }
            defaultRoutesByKey[route.key] = nil
        case .specificRoute, .other, .done, .error:
            break
        }
    }

    /// Forgets every default route, before a fresh dump of routes is applied (after a silent
    /// flush or an overflow).
    public mutating func removeAllRoutes() {
        defaultRoutesByKey = [:]
    }

    /// Forgets the default routes through one interface, before a dump of its routes is applied.
    public mutating func removeRoutes(through interfaceIndex: Int32) {
        defaultRoutesByKey = defaultRoutesByKey.filter { !$0.value.outputInterfaces.contains(interfaceIndex) }
    }

    /// Forgets the default routes whose preferred source is one of these (removed) addresses.
    public mutating func removeRoutes(preferredSources: [IPAddress]) {
        guard !preferredSources.isEmpty else { return }
        defaultRoutesByKey = defaultRoutesByKey.filter {
            !($0.value.preferredSource.map(preferredSources.contains) ?? false)
        }
    }

    /// The usable address with these bytes, on whichever interface it lives.
    public func usableAddress(_ address: IPAddress) -> AddressRecord? {
        addressesByKey.values.first { $0.address == address && $0.isUsable }
    }

    public func addresses(of interfaceIndex: Int32) -> [AddressRecord] {
        addressesByKey.values.filter { $0.interfaceIndex == interfaceIndex }
    }

    /// Does any table hold a unicast default route out of this interface?
    public func carriesDefaultRoute(_ interfaceIndex: Int32) -> Bool {
        defaultRoutesByKey.values.contains { $0.isUnicastDefault && $0.outputInterfaces.contains(interfaceIndex) }
    }
}
