/// A probe's way out: wherever the kernel routes it, or pinned to one interface. One value,
/// carried unchanged from a target's spec through name resolution (one resolver channel per
/// egress), the route question (`RTA_OIF` when pinned) and the probe's sockets
/// (`CURLOPT_INTERFACE`), so a probe bound to an interface needs no change to the monitor, the
/// route gates or the resolver beyond constructing the value.
public struct Egress: Hashable, Sendable, CustomStringConvertible {
    /// The interface the probe is pinned to; `nil`: the kernel's choice.
    public let interface: String?

    /// Where the kernel's main routing decision sends it (every probe today).
    public static let kernelChoice = Egress(interface: nil)

    /// Only out of `interface`, with that interface's source address for the family.
    public static func pinned(to interface: String) -> Egress { Egress(interface: interface) }

    private init(interface: String?) {
        self.interface = interface
    }

    public var description: String { interface.map { "via \($0)" } ?? "the kernel's choice" }
}

/// One question a route gate asks after a batch: is there still a usable route to this
/// address out of this egress?
public struct RouteQuestion: Hashable, Sendable {
    public var address: IPAddress
    public var egress: Egress

    public init(_ address: IPAddress, via egress: Egress = .kernelChoice) {
        self.address = address
        self.egress = egress
    }
}

extension Set<RouteQuestion> {
    /// The addresses among these questions asked out of `egress`: a source judges each of its
    /// families by its own way out.
    package func addresses(via egress: Egress) -> Set<IPAddress> {
        Set<IPAddress>(lazy.filter { $0.egress == egress }.map(\.address))
    }

    /// The addresses among these questions by the egress they were asked out of, in one pass: a
    /// source with thousands of targets looks each one's up here, never builds a set per target
    /// (a set per target grows with the square of the targets: docs/scale.md). Each set
    /// is sized for its own questions, counted first: not grown by rehashing at a link-down, nor
    /// sized for all of them (with a hundred ways out, a hundred sets each as large as the whole).
    package var addressesByEgress: [Egress: Set<IPAddress>] {
        let counts = reduce(into: [Egress: Int]()) { counts, question in counts[question.egress, default: 0] += 1 }
        var groups = counts.mapValues { Set<IPAddress>(minimumCapacity: $0) }
        for question in self { groups[question.egress, default: []].insert(question.address) }
        return groups
    }
}
