import FoundationEssentials
import Reachable

/// What `--per-uplink` knows between checks: one connectivity book per uplink, in interface-name
/// order (the order is the scheduler's item numbers). Pure: the checker and its route gate change
/// it only through these methods, and the tests drive it without a kernel.
struct UplinkBooks: Sendable {
    struct Uplink: Sendable {
        let interface: String
        var book: ConnectivityBook
        var egress: Egress { .pinned(to: interface) }
    }

    let spec: ConnectivitySpec
    let interval: Duration
    private(set) var uplinks: [Uplink] = []

    init(spec: ConnectivitySpec, interval: Duration) {
        self.spec = spec
        self.interval = interval
    }

    /// Follows a reading of the uplinks (interface → families): an interface that stopped being
    /// one leaves (its `connectivity` is `null` from this document on); one that became one
    /// starts `unknown`; the others learn which of their last addresses lost their route out
    /// of the interface (`unroutable`) and which families they are uplinks of now.
    ///
    /// - Returns: whether the set of interfaces changed (the scheduler's items are renumbered).
    mutating func follow(
        _ current: [String: Set<AddressFamily>], unroutable: Set<RouteQuestion>, at now: Date
    ) -> Bool {
        let before = uplinks.map(\.interface)
        let kept = Dictionary(uniqueKeysWithValues: uplinks.map { ($0.interface, $0) })
        uplinks = current.keys.sorted().map { interface in
            var uplink =
                kept[interface]
                ?? Uplink(
                    interface: interface,
                    book: ConnectivityBook(spec: spec, interval: interval, since: now))
            uplink.book.routesGone(unroutable.addresses(via: uplink.egress), pathUnreachable: false, at: now)
            uplink.book.uplinkFamilies(current[interface] ?? [], at: now)
            return uplink
        }
        return uplinks.map(\.interface) != before
    }

    /// Each uplink's entry as the document shows it, by interface name.
    var statuses: [String: ConnectivityStatus] {
        Dictionary(uniqueKeysWithValues: uplinks.map { ($0.interface, $0.book.status) })
    }

    /// A target family that went out of `interface` started failing: the uplink's item when its
    /// check is to run now (`ConnectivityBook.recheckForStall`), else `nil`.
    mutating func recheckForStall(of interface: String, at now: ContinuousClock.Instant) -> Int? {
        guard let item = uplinks.firstIndex(where: { $0.interface == interface }),
            uplinks[item].book.recheckForStall(at: now)
        else { return nil }
        return item
    }

    subscript(item: Int) -> Uplink? {
        get { uplinks.indices.contains(item) ? uplinks[item] : nil }
        set {
            guard let newValue, uplinks.indices.contains(item), uplinks[item].interface == newValue.interface
            else { return }
            uplinks[item] = newValue
        }
    }
}

extension ReachabilityStatus {
    /// Puts each uplink's check beside its interface; every other interface's is `null`.
    mutating func setUplinkConnectivity(_ statuses: [String: ConnectivityStatus]) {
        for index in interfaces.indices where interfaces[index].connectivity != statuses[interfaces[index].name] {
            interfaces[index].connectivity = statuses[interfaces[index].name]
        }
    }

    /// One uplink's check, beside its interface (nothing when the interface is gone).
    mutating func setUplinkConnectivity(_ status: ConnectivityStatus, of interface: String) {
        guard let index = interfaces.firstIndex(where: { $0.name == interface }),
            interfaces[index].connectivity != status
        else { return }
        interfaces[index].connectivity = status
    }
}
