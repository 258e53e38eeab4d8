/// What the kernel's answers say beyond the document's `ipv4`/`ipv6`: why a family has no way
/// out. Not on the wire; the cause (`CauseRules`) reads it to tell a link that went down from an
/// address that went away from a route that was deleted.
public struct PathFacts: Sendable, Equatable {
    /// One family's way out, as the route lookup answered it.
    public enum WayOut: Sendable, Equatable {
        /// A usable route: the family reads `true`.
        case out(interface: String)
        /// A route out of an interface that is down or without carrier (the kernel keeps such
        /// routes, flagged `linkdown`).
        case unusableInterface(String)
        /// A route out of a usable interface, but no usable source address to send from.
        case withoutSource(interface: String)
        /// No route at all, or an `unreachable`/`blackhole`/`prohibit` one.
        case noRoute
    }

    /// Why an interface carries nothing.
    public enum LinkTrouble: Sendable, Equatable {
        /// Administratively down (`ip link set … down`).
        case down
        /// Up, but without carrier (a cable out, a veth whose peer is down).
        case noCarrier
    }

    /// One interface as the cause needs it.
    public struct Link: Sendable, Equatable {
        /// `nil` when the interface is usable.
        public var trouble: LinkTrouble?
        /// The families it has a usable address of.
        public var addressed: AddressFamilies

        public init(trouble: LinkTrouble?, addressed: AddressFamilies) {
            self.trouble = trouble
            self.addressed = addressed
        }
    }

    public var ipv4: WayOut
    public var ipv6: WayOut
    /// Every interface but loopback, by name.
    public var links: [String: Link]

    public init(ipv4: WayOut = .noRoute, ipv6: WayOut = .noRoute, links: [String: Link] = [:]) {
        self.ipv4 = ipv4
        self.ipv6 = ipv6
        self.links = links
    }

    public subscript(family: AddressFamily) -> WayOut {
        family == .ipv4 ? ipv4 : ipv6
    }

    /// The interface a family goes out of, when it has a usable route.
    public func interface(of family: AddressFamily) -> String? {
        if case .out(let name) = self[family] { return name }
        return nil
    }
}

extension PathFacts {
    /// The facts of one reading of the table and its lookups (`derive`'s own rules).
    init(table: NetworkTable, routing: RoutingSnapshot, lookups: RouteLookups, chosen: [LinkRecord?]) {
        func wayOut(_ lookup: RouteLookup, chosen: LinkRecord?) -> WayOut {
            if let chosen { return .out(interface: chosen.name) }
            guard case .route(let type, let index?, let source) = lookup, type == KernelValue.unicastRoute,
                let name = routing.interfaceNames[index]
            else { return .noRoute }
            guard routing.usableInterfaces.contains(index) else { return .unusableInterface(name) }
            guard let source, routing.usableAddresses.contains(source) else { return .withoutSource(interface: name) }
            return .noRoute
        }
        var links: [String: Link] = [:]
        for link in table.links.values where !link.isLoopback {
            let trouble: LinkTrouble? =
                link.isUsable ? nil : link.flags & KernelValue.interfaceUp == 0 ? .down : .noCarrier
            links[link.name] = Link(
                trouble: trouble, addressed: AddressFamilies((routing.preferredSources[link.index] ?? [:]).keys))
        }
        self.init(
            ipv4: wayOut(lookups.ipv4, chosen: chosen[0]), ipv6: wayOut(lookups.ipv6, chosen: chosen[1]),
            links: links)
    }
}
