/// What a route answer needs to be judged, as of the netlink source's last reading: which
/// interfaces and addresses are usable, and every interface's name. Handed to the monitor after
/// each reading, so route checks on other threads never touch the source's table.
package struct RoutingSnapshot: Sendable, Equatable {
    package var interfaceNames: [Int32: String] = [:]
    package var usableInterfaces: Set<Int32> = []
    package var usableAddresses: Set<IPAddress> = []

    package init() {}

    package init(_ table: NetworkTable) {
        for link in table.links.values {
            interfaceNames[link.index] = link.name
            if link.isUsable { usableInterfaces.insert(link.index) }
        }
        usableAddresses = Set(table.addresses.filter(\.isUsable).map(\.address))
    }

    /// The interface index a route question for `egress` names (`RTA_OIF`): 0 for the kernel's
    /// choice; `nil` when the pinned interface does not exist (it carries nothing).
    package func outputInterface(for egress: Egress) -> Int32? {
        guard let name = egress.interface else { return 0 }
        return interfaceNames.first { $0.value == name }?.key
    }
}
