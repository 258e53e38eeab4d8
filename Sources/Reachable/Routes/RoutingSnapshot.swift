/// What a route answer needs to be judged, as of the netlink source's last reading: which
/// interfaces and addresses are usable, and every interface's name. Handed to the monitor after
/// each reading, so route checks on other threads never touch the source's table.
package struct RoutingSnapshot: Sendable, Equatable {
    package var interfaceNames: [Int32: String] = [:]
    package var usableInterfaces: Set<Int32> = []
    package var usableAddresses: Set<IPAddress> = []
    /// Each interface's preferred source address of each family: the first usable one (an IPv4
    /// primary before a secondary). A pinned question is asked once more from it, so rules that
    /// select a table by source apply; a pinned probe binds to it.
    package var preferredSources: [Int32: [AddressFamily: IPAddress]] = [:]
    /// Every interface that is an uplink, with the families it is one of (`NetlinkSource.routingSnapshot()`);
    /// empty unless the monitor was asked to discover them (`--per-uplink`).
    package var uplinks: [String: Set<AddressFamily>] = [:]

    package init() {}

    package init(_ table: NetworkTable) {
        for link in table.links.values {
            interfaceNames[link.index] = link.name
            if link.isUsable { usableInterfaces.insert(link.index) }
        }
        let usable = table.addresses.filter(\.isUsable)
        usableAddresses = Set(usable.map(\.address))
        let primaryFirst = usable.sorted { a, b in
            let (aSecondary, bSecondary) = (a.isSecondary, b.isSecondary)
            return aSecondary != bSecondary ? !aSecondary : a.address < b.address
        }
        for address in primaryFirst
        where preferredSources[address.interfaceIndex]?[address.address.addressFamily] == nil {
            preferredSources[address.interfaceIndex, default: [:]][address.address.addressFamily] = address.address
        }
    }

    /// The interface index a route question for `egress` names (`RTA_OIF`): 0 for the kernel's
    /// choice; `nil` when the pinned interface does not exist (it carries nothing).
    package func outputInterface(for egress: Egress) -> Int32? {
        guard let name = egress.interface else { return 0 }
        return interfaceNames.first { $0.value == name }?.key
    }

    /// The source address a pinned probe of `family` out of `egress` binds to; `nil` for the
    /// kernel's choice or an interface without a usable address of the family.
    package func preferredSource(of family: AddressFamily, via egress: Egress) -> IPAddress? {
        guard egress.interface != nil, let index = outputInterface(for: egress) else { return nil }
        return preferredSources[index]?[family]
    }
}
