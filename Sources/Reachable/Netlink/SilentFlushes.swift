import CMnl
import Glibc

/// Which routes may have gone without an `RTM_DELROUTE`, from one batch of notifications. The
/// kernel flushes silently: the IPv4 routes through a link that is set down or removed; the
/// routes whose preferred source is an address being removed; and every IPv4 route through an
/// interface that loses its last IPv4 address. A link going up, an address added, a carrier
/// change or a secondary address removed never takes other routes with it.
struct SilentFlushes {
    private var linksDown: Set<Int32> = []
    /// Links set down (not removed) in this batch: the kernel drops their IPv6 addresses next.
    private(set) var linksSetDown: Set<Int32> = []
    private var removedAddresses: [AddressRecord] = []

    /// Looks at one message before it is applied to `table` (whose links are still the old ones).
    mutating func note(_ message: NetlinkMessage, before table: NetworkTable) {
        switch message {
        case .link(let link):
            let wasUp = table.links[link.index].map { $0.flags & reachd_iff_up != 0 } ?? false
            if wasUp && link.flags & reachd_iff_up == 0 {
                linksDown.insert(link.index)
                linksSetDown.insert(link.index)
            }
        case .linkRemoved(let index):
            linksDown.insert(index)
        case .addressRemoved(let address):
            removedAddresses.append(address)
        default:
            break
        }
    }

    /// Removed addresses: a default route anywhere with one of them as its source is gone.
    var sources: [IPAddress] { removedAddresses.map(\.address) }

    /// The interfaces whose routes must be read again, judged on the table after the batch.
    /// (IPv6 removals are re-read too: cheap to be sure, and rare on a big routing table.)
    func interfacesToReread(after table: NetworkTable) -> [Int32] {
        var interfaces = linksDown
        for address in removedAddresses {
            let family = Int32(address.family)
            let lastOfFamily = !table.addresses(of: address.interfaceIndex).contains { $0.family == address.family }
            if family == AF_INET6 || lastOfFamily { interfaces.insert(address.interfaceIndex) }
        }
        return interfaces.sorted()
    }

    var isEmpty: Bool { linksDown.isEmpty && removedAddresses.isEmpty }
}
