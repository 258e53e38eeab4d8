import FoundationEssentials
import Reachable

/// The series of the status document whose labels are known at start — the route state, the
/// families, the transports, connectivity and DNS, one series per value, 1 on the current one —
/// and how many documents there have been. Written from the document `ServerMetrics` applied
/// last; before the first, every one reads 0.
enum DocumentMetrics {
    static func write(_ status: ReachabilityStatus?, into out: inout ExpositionWriter) {
        let path = status?.path
        out.family("state", .gauge, Help.state)
        for state in [NetworkPath.State.unknown, .reachable, .unreachable] {
            out.flag("state", ("state", state.rawValue), holds: state == path?.state)
        }
        out.family("family_reachable", .gauge, Help.family)
        out.flag("family_reachable", ("family", "ipv4"), holds: path?.ipv4 == true)
        out.flag("family_reachable", ("family", "ipv6"), holds: path?.ipv6 == true)
        out.family("transport_active", .gauge, Help.transport)
        for transport in Transport.allCases {
            out.flag(
                "transport_active", ("transport", transport.rawValue),
                holds: path?.transport.contains(transport) == true)
        }
        out.family("data_metered", .gauge, Help.dataMetered)
        out.flag("data_metered", holds: path?.isDataMetered == true)
        // The sequence counts every change, so a document never applied still counts.
        out.family("status_updates_total", .counter, Help.statusUpdates)
        out.counter("status_updates_total", count: status?.sequence ?? 0)
        out.family("last_change_timestamp_seconds", .gauge, Help.lastChange)
        out.gauge("last_change_timestamp_seconds", value: status?.changedAt.timeIntervalSince1970 ?? 0)

        let connectivity = status?.connectivity
        out.family("connectivity_state", .gauge, Help.connectivity)
        for state in ConnectivityStatus.State.allCases {
            out.flag("connectivity_state", ("state", state.rawValue), holds: state == connectivity?.state)
        }
        out.family("connectivity_family_state", .gauge, Help.connectivityFamily)
        for family in AddressFamily.allCases {
            // A family without addresses has no state: every series of it reads 0.
            let current = connectivity?.seriesState(of: family)
            for state in ConnectivityStatus.State.allCases {
                out.flag(
                    "connectivity_family_state", ("family", family.rawValue), ("state", state.rawValue),
                    holds: state == current)
            }
        }
        out.family("dns_state", .gauge, Help.dns)
        for state in DNSStatus.State.allCases {
            out.flag("dns_state", ("state", state.rawValue), holds: state == status?.dns.state)
        }
        // One series per cause layer and `none` (for `cause: null`), so an alert can say why.
        out.family("cause", .gauge, Help.cause)
        out.flag("cause", ("layer", "none"), holds: status != nil && status?.cause == nil)
        for layer in Cause.Layer.allCases {
            out.flag("cause", ("layer", layer.rawValue), holds: layer == status?.cause?.layer)
        }
    }
}

/// The HELP text of each family (one place, so every series of a family shares it).
private enum Help {
    static let state = "1 on the current route-based state of the network (unknown, reachable, unreachable)."
    static let family =
        "1 when the kernel has a usable route to the outside world for this address family."
    static let transport = "1 when outside traffic leaves through an interface of this transport."
    static let dataMetered = "1 when outside traffic leaves through a metered (cellular or configured) interface."
    static let statusUpdates = "Changes of the status document since start (its sequence number)."
    static let lastChange = "When the status document last changed, in seconds since the Unix epoch."
    static let connectivity =
        "1 on the current state of the connectivity check (disabled, unknown, none, limited, portal, full)."
    static let connectivityFamily =
        "1 on the current state of the connectivity check for this address family (the check's own while the host's name does not resolve); all 0 while the host has no address of it."
    static let dns = "1 on the current state of DNS (disabled, unknown, ok, degraded, failing)."
    static let cause =
        "1 on the layer of the current cause, the lowest that fails (link, address, route, dns, path, portal, check, target, uplink, quality, config); none when nothing is known to be wrong."
}
