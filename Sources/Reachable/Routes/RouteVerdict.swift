/// Whether the kernel would carry a packet to one address: a unicast route out of a usable
/// interface with a usable preferred source address — or a `local` route (an address of this
/// host, `127.0.0.1`, `::1`): a sidecar's own pod is the commonest target.
public enum RouteVerdict: Sendable, Equatable {
    /// Routable; the output interface the kernel chose (`lo` for a local address) and the
    /// preferred source address it would send from (`nil` for a local address: the kernel
    /// picks it), which a pinned probe binds to so that policy routing applies.
    case routable(interface: String, source: IPAddress?)
    /// No usable route: none at all, an `unreachable`/`blackhole`/`prohibit` one, one out of an
    /// interface that is down, or one without a usable source address.
    case noRoute
    /// The kernel could not be asked just now (a passing error): decide nothing.
    case unknown

    /// The one rule for judging the kernel's answer, used by `derive` (the path's `ipv4`/`ipv6`)
    /// and by `RouteChecker` (targets, the connectivity check, nameservers).
    ///
    /// A usable preferred source is required, because that is what the kernel does with none:
    /// an IPv4 route on an interface without an IPv4 address is answered without `RTA_PREFSRC`,
    /// and a connect then sends from `0.0.0.0`; with only a tentative IPv6 address the kernel
    /// picks the link-local one. Either way no answer can come back
    /// (`NamespaceRouteVerdictTests` shows both).
    ///
    /// - Parameter pinnedTo: the interface a pinned egress asked for (0: the kernel's choice):
    ///   a route out of any other interface (a local address among them) carries nothing for it.
    package init(judging answer: RouteLookup, by snapshot: RoutingSnapshot, pinnedTo: Int32 = 0) {
        if pinnedTo != 0, case .route(_, let interface, _) = answer, interface != pinnedTo {
            self = .noRoute
            return
        }
        switch answer {
        case .route(let type, let interface?, _) where type == KernelValue.localRoute:
            self = .routable(interface: snapshot.interfaceNames[interface] ?? "lo", source: nil)
        case .route(let type, let interface?, let source?) where type == KernelValue.unicastRoute:
            guard snapshot.usableInterfaces.contains(interface), snapshot.usableAddresses.contains(source),
                let name = snapshot.interfaceNames[interface]
            else {
                self = .noRoute
                return
            }
            self = .routable(interface: name, source: source)
        case .route:
            self = .noRoute
        case .failed(let code):
            self = SystemError("route lookup", code: code).isTransient ? .unknown : .noRoute
        case .notAsked:
            self = .unknown
        }
    }
}

extension RouteVerdict {
    /// The verdict for `address` out of `egress` (the one rule for every question a probe or a
    /// route gate asks): the kernel's choice is asked once; a pinned interface is asked with
    /// `RTA_OIF` alone, then — when that finds no route — once more from the interface's
    /// preferred source of the family, so a default route in a table that a `from` rule selects
    /// counts (either answer counts, judged `pinnedTo` the interface).
    ///
    /// - Parameter ask: the kernel's lookup for (address, output interface, source).
    package static func asking(
        _ address: IPAddress, via egress: Egress, by snapshot: RoutingSnapshot,
        _ ask: (IPAddress, _ outputInterface: Int32, _ source: IPAddress?) -> RouteLookup
    ) -> RouteVerdict {
        guard let interface = snapshot.outputInterface(for: egress) else { return .noRoute }
        let plain = RouteVerdict(judging: ask(address, interface, nil), by: snapshot, pinnedTo: interface)
        guard interface != 0, plain == .noRoute,
            let source = snapshot.preferredSource(of: address.addressFamily, via: egress)
        else { return plain }
        return RouteVerdict(judging: ask(address, interface, source), by: snapshot, pinnedTo: interface)
    }
}
