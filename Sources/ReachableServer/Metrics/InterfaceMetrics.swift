import Prometheus
import Reachable
import Synchronization

/// The series of each interface in the document (`reachd_interface_up`, `reachd_interface_info`,
/// labelled by device; `reachd_interface_connectivity_state` by device and family while the
/// interface is an uplink of the family under `--per-uplink`): made when an interface appears,
/// replaced when its labels change, removed when it is gone — a node's interfaces come and go.
final class InterfaceMetrics: Sendable {
    private struct Series {
        var up: Gauge
        var info: Gauge
        var transport: String
        var kind: String
    }

    private let registry: PrometheusCollectorRegistry
    private let byName = Mutex(KeyedSeries<Series>())
    /// One gauge per state, 1 on the current one, per device and family.
    private let uplinkStates = Mutex(KeyedSeries<[ConnectivityStatus.State: Gauge]>())

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
    }

    /// Sets the series of `interfaces` (the document's), and removes those of interfaces not in it.
    func update(_ interfaces: [InterfaceStatus]) {
        byName.withLock { known in
            known.update(
                interfaces, key: \.name,
                make: { interface in
                    let transport = interface.transport.rawValue
                    let kind = interface.kind ?? ""
                    return Series(
                        up: registry.makeGauge(
                            descriptor: .reachd("interface_up", help: Help.interfaceUp),
                            labels: [("device", interface.name)]),
                        info: makeInfo(interface.name, transport: transport, kind: kind),
                        transport: transport, kind: kind)
                },
                update: { series, interface in
                    let transport = interface.transport.rawValue
                    let kind = interface.kind ?? ""
                    if series.transport != transport || series.kind != kind {
                        // Another series (its labels changed): the old one must not linger at 1.
                        registry.unregisterGauge(series.info)
                        series.info = makeInfo(interface.name, transport: transport, kind: kind)
                        series.transport = transport
                        series.kind = kind
                    }
                    series.up.set(to: interface.operState == "up" ? 1 : 0)
                },
                remove: { series in
                    registry.unregisterGauge(series.up)
                    registry.unregisterGauge(series.info)
                })
        }
        updateUplinks(interfaces)
    }

    /// `reachd_interface_connectivity_state{device,family,state}` for each family an interface's
    /// own check shows.
    private func updateUplinks(_ interfaces: [InterfaceStatus]) {
        let checked = interfaces.flatMap { interface in
            AddressFamily.allCases.compactMap { family in
                interface.connectivity?.seriesState(of: family).map {
                    (device: interface.name, family: family, state: $0)
                }
            }
        }
        uplinkStates.withLock { known in
            known.update(
                checked, key: { "\($0.device) \($0.family.rawValue)" },
                make: { checked in
                    Dictionary(
                        uniqueKeysWithValues: ConnectivityStatus.State.allCases.map { state in
                            let labels = [
                                ("device", checked.device), ("family", checked.family.rawValue),
                                ("state", state.rawValue),
                            ]
                            return (
                                state,
                                registry.makeGauge(
                                    descriptor: .reachd("interface_connectivity_state", help: Help.uplinkState),
                                    labels: labels)
                            )
                        })
                },
                update: { gauges, checked in
                    for (state, gauge) in gauges { gauge.set(to: state == checked.state ? 1 : 0) }
                },
                remove: { gauges in
                    for gauge in gauges.values { registry.unregisterGauge(gauge) }
                })
        }
    }

    private func makeInfo(_ device: String, transport: String, kind: String) -> Gauge {
        let info = registry.makeGauge(
            descriptor: .reachd("interface_info", help: Help.interfaceInfo),
            labels: [("device", device), ("transport", transport), ("kind", kind)])
        info.set(to: 1)
        return info
    }
}

/// The HELP text of each family (one place, so every series of a family shares it).
private enum Help {
    static let interfaceUp = "1 when the interface's operational state is up (as node_network_up)."
    static let interfaceInfo = "Each interface's transport and link kind; always 1."
    static let uplinkState =
        "The connectivity check through this interface alone (--per-uplink), per family: 1 on the current state."
}
