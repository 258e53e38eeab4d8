import Glibc

/// Turns the table and the kernel's route lookups into the network path, by the rules in ARCHITECTURE.md ("How Linux state becomes a status").
///
/// Pure: the same inputs always give the same path, which is what lets the monitor publish only
/// real changes and lets tests cover every rule without a kernel.
public func derive(
    table: NetworkTable,
    lookups: RouteLookups,
    classifier: TransportClassifier,
    meteredPatterns: [String] = []
) -> NetworkPath {
    var transports: [Int32: Transport] = [:]
    for link in table.links.values where !link.isLoopback {
        transports[link.index] = classifier.transport(of: link)
    }

    /// The output interface of a lookup that counts: a unicast route judged routable by the one
    /// route rule (`RouteVerdict`). A `local` answer for an outside address is not a way out.
    let routing = RoutingSnapshot(table)
    func reachableInterface(_ lookup: RouteLookup) -> LinkRecord? {
        guard case .routable = RouteVerdict(judging: lookup, by: routing),
            case .route(let type, let outputInterface?, _) = lookup, type == KernelValue.unicastRoute
        else { return nil }
        return table.links[outputInterface]
    }

    let chosen = [reachableInterface(lookups.ipv4), reachableInterface(lookups.ipv6)]
    var transport = TransportSet()
    var isDataMetered = false
    for case let link? in chosen {
        let kind = transports[link.index] ?? .other
        transport.insert(kind)
        if kind == .cellular || meteredPatterns.contains(where: { fnmatch($0, link.name, 0) == 0 }) {
            isDataMetered = true
        }
    }

    let interfaces = table.links.values
        .filter { !$0.isLoopback }
        .sorted { $0.index < $1.index }
        .map { link in
            InterfaceStatus(
                name: link.name,
                index: link.index,
                transport: transports[link.index] ?? .other,
                kind: link.kind,
                operState: link.operStateName,
                isDefaultRoute: table.carriesDefaultRoute(link.index),
                addresses: table.addresses(of: link.index).sorted(by: addressOrder).map(\.description)
            )
        }

    let ipv4 = chosen[0] != nil
    let ipv6 = chosen[1] != nil
    return NetworkPath(
        state: ipv4 || ipv6 ? .reachable : .unreachable,
        ipv4: ipv4,
        ipv6: ipv6,
        transport: transport,
        isDataMetered: isDataMetered,
        interfaces: interfaces,
        facts: PathFacts(table: table, routing: routing, lookups: lookups, chosen: chosen)
    )
}

/// IPv4 before IPv6, then by address: a stable order, so a dump in another order is no change.
private func addressOrder(_ a: AddressRecord, _ b: AddressRecord) -> Bool {
    if a.family != b.family { return a.family < b.family }
    if a.address != b.address { return a.address < b.address }
    return a.prefixLength < b.prefixLength
}
