import Reachable

/// The series of each interface in the document (`reachd_interface_up`, `reachd_interface_info`,
/// labelled by device; `reachd_interface_connectivity_state` by device and family while the
/// interface is an uplink of the family under `--per-uplink`). Written from the document applied
/// last, so an interface's series come and go with it, and an `info` whose labels changed is
/// the new one alone.
enum InterfaceMetrics {
    static func write(_ listed: [InterfaceStatus], into out: inout ExpositionWriter) {
        // A name listed twice is written once: a series twice is a scrape Prometheus refuses.
        var names = Set<String>()
        let interfaces = listed.filter { names.insert($0.name).inserted }
        out.family("interface_up", .gauge, Help.interfaceUp)
        for interface in interfaces {
            out.flag("interface_up", ("device", interface.name), holds: interface.operState == "up")
        }
        out.family("interface_info", .gauge, Help.interfaceInfo)
        for interface in interfaces {
            out.gauge(
                "interface_info", ("device", interface.name), ("transport", interface.transport.rawValue),
                ("kind", interface.kind ?? ""), value: 1)
        }
        out.family("interface_connectivity_state", .gauge, Help.uplinkState)
        for interface in interfaces {
            for family in AddressFamily.allCases {
                guard let current = interface.connectivity?.seriesState(of: family) else { continue }
                for state in ConnectivityStatus.State.allCases {
                    out.flag(
                        "interface_connectivity_state", ("device", interface.name), ("family", family.rawValue),
                        ("state", state.rawValue), holds: state == current)
                }
            }
        }
    }
}

/// The HELP text of each family (one place, so every series of a family shares it).
private enum Help {
    static let interfaceUp = "1 when the interface's operational state is up (as node_network_up)."
    static let interfaceInfo = "Each interface's transport and link kind; always 1."
    static let uplinkState =
        "The connectivity check through this interface alone (--per-uplink), per family: 1 on the current state."
}
