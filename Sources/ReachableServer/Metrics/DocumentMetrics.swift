import FoundationEssentials
import Prometheus
import Reachable
import Synchronization

/// The series of the status document whose labels are known at start — the route state, the
/// families, the transports, connectivity and DNS, one series per value, 1 on the current one —
/// and how many documents there have been. Set with each document, never per scrape.
final class DocumentMetrics: Sendable {
    private let states: [NetworkPath.State: Gauge]
    private let families: (ipv4: Gauge, ipv6: Gauge)
    private let transports: [Transport: Gauge]
    private let dataMetered: Gauge
    private let statusUpdates: Counter
    private let lastChange: Gauge
    private let connectivity: [ConnectivityStatus.State: Gauge]
    private let connectivityFamilies: [AddressFamily: [ConnectivityStatus.State: Gauge]]
    private let dns: [DNSStatus.State: Gauge]
    /// One series per cause layer and `none` (for `cause: null`), so an alert can say why.
    private let causes: [Cause.Layer?: Gauge]
    /// The sequence of the last document, so `statusUpdates` counts the ones skipped too.
    private let lastSequence = Mutex<UInt64>(0)

    init(registry: PrometheusCollectorRegistry) {
        func gauge(_ name: String, _ help: String, _ labels: [(String, String)] = []) -> Gauge {
            registry.makeGauge(descriptor: .reachd(name, help: help), labels: labels)
        }
        states = Dictionary(
            uniqueKeysWithValues: [NetworkPath.State.unknown, .reachable, .unreachable].map {
                ($0, gauge("state", Help.state, [("state", $0.rawValue)]))
            })
        families = (
            gauge("family_reachable", Help.family, [("family", "ipv4")]),
            gauge("family_reachable", Help.family, [("family", "ipv6")])
        )
        transports = Dictionary(
            uniqueKeysWithValues: Transport.allCases.map {
                ($0, gauge("transport_active", Help.transport, [("transport", $0.rawValue)]))
            })
        dataMetered = gauge("data_metered", Help.dataMetered)
        statusUpdates = registry.makeCounter(
            descriptor: .reachd("status_updates_total", help: Help.statusUpdates), labels: [])
        lastChange = gauge("last_change_timestamp_seconds", Help.lastChange)
        connectivity = Dictionary(
            uniqueKeysWithValues: ConnectivityStatus.State.allCases.map {
                ($0, gauge("connectivity_state", Help.connectivity, [("state", $0.rawValue)]))
            })
        connectivityFamilies = Dictionary(
            uniqueKeysWithValues: AddressFamily.allCases.map { family in
                let states = ConnectivityStatus.State.allCases.map { state in
                    let labels = [("family", family.rawValue), ("state", state.rawValue)]
                    return (state, gauge("connectivity_family_state", Help.connectivityFamily, labels))
                }
                return (family, Dictionary(uniqueKeysWithValues: states))
            })
        dns = Dictionary(
            uniqueKeysWithValues: DNSStatus.State.allCases.map {
                ($0, gauge("dns_state", Help.dns, [("state", $0.rawValue)]))
            })
        causes = Dictionary(
            uniqueKeysWithValues: ([nil] + Cause.Layer.allCases).map { (layer: Cause.Layer?) in
                (layer, gauge("cause", Help.cause, [("layer", layer?.rawValue ?? "none")]))
            })
    }

    /// Sets every series from `status`: call with each new document, in order.
    func update(_ status: ReachabilityStatus) {
        let path = status.path
        for (state, gauge) in states { gauge.set(to: state == path.state ? 1 : 0) }
        families.ipv4.set(to: path.ipv4 ? 1 : 0)
        families.ipv6.set(to: path.ipv6 ? 1 : 0)
        for (transport, gauge) in transports { gauge.set(to: path.transport.contains(transport) ? 1 : 0) }
        dataMetered.set(to: path.isDataMetered ? 1 : 0)
        lastChange.set(to: status.changedAt.timeIntervalSince1970)
        for (state, gauge) in connectivity { gauge.set(to: state == status.connectivity.state ? 1 : 0) }
        for (family, states) in connectivityFamilies {
            // A family without addresses has no state: every series of it reads 0.
            let current = status.connectivity.seriesState(of: family)
            for (state, gauge) in states { gauge.set(to: state == current ? 1 : 0) }
        }
        for (state, gauge) in dns { gauge.set(to: state == status.dns.state ? 1 : 0) }
        for (layer, gauge) in causes { gauge.set(to: layer == status.cause?.layer ? 1 : 0) }

        lastSequence.withLock { last in
            // The sequence counts every change, so a skipped document still counts.
            if status.sequence > last {
                statusUpdates.increment(by: Int64(status.sequence - last))
            }
            last = max(last, status.sequence)
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
