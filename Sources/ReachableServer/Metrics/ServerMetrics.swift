public import FoundationEssentials
public import Prometheus
public import Reachable
import Synchronization

/// Everything `/metrics` shows, in Prometheus' text format (0.0.4), kept in a swift-prometheus
/// registry.
///
/// Values that come from the status document are set when the document changes (`update`), and
/// the netlink counters when a batch or the document changes (`recordSource`) — never while a
/// scrape is answered, so a scrape costs one rendering of a few kilobytes and waits for nothing
/// but the registry's own short lock. Every series whose labels are known at start is created at
/// start, at 0 (a target's series with the first document that lists it: every failure reason
/// among them); the series of an interface, a target family or a nameserver that is gone are
/// removed.
///
/// Label values are never taken from a request: `route` is one of a fixed set (`RouteLabel`).
public final class ServerMetrics: Sendable {
    /// The content type of the text format, as Prometheus asks for it.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// Bucket bounds of the probe durations: 5 ms to 10 s (the probe timeout is 3 s by default).
    static let probeBuckets: [Duration] = [
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
    ]

    /// Bucket bounds of the nameserver queries: 1 ms (a server beside us) to 5 s (the query
    /// timeout is 2 s by default).
    static let nameserverBuckets: [Duration] = [
        .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
        .milliseconds(2500), .seconds(5),
    ]

    /// What `update` and `recordSource` keep between calls.
    private struct State {
        var sequence: UInt64 = 0
        var source = SourceStatistics()
        var interfaces: [String: InterfaceSeries] = [:]
        var targets: [String: TargetSeries] = [:]
        var nameservers: [String: NameserverSeries] = [:]
    }

    private struct InterfaceSeries {
        var up: Gauge
        var info: Gauge
        var transport: String
        var kind: String
    }

    private struct TargetSeries {
        var up: Gauge
        var duration: DurationHistogram
        var transitions: Counter
        /// Every reason, made with the target: a failure that never happened reads 0.
        var failures: [ProbeFailureReason: Counter]
        /// Only the families in the target's addresses.
        var families: [AddressFamily: Gauge] = [:]
        /// The state in the last document, to count its changes; `nil` before the first.
        var state: TargetStatus.State?
    }

    private struct NameserverSeries {
        var up: Gauge
        var duration: DurationHistogram
    }

    /// A `reachd_http_requests_total` series.
    private struct RequestKey: Hashable {
        var route: RouteLabel
        var code: Int
    }

    /// The registry the text is rendered from.
    public let registry = PrometheusCollectorRegistry()
    private let state = Mutex(State())

    private let states: [NetworkPath.State: Gauge]
    private let families: (ipv4: Gauge, ipv6: Gauge)
    private let transports: [Transport: Gauge]
    private let dataMetered: Gauge
    private let statusUpdates: Counter
    private let lastChange: Gauge
    private let connectivity: [ConnectivityStatus.State: Gauge]
    private let connectivityFamilies: [AddressFamily: [ConnectivityStatus.State: Gauge]]
    private let dns: [DNSStatus.State: Gauge]
    private let reloadSuccessful: Gauge
    private let reloadSuccessTime: Gauge
    private let sseClients: Gauge
    private let changesKept: Gauge
    private let sseEventsSent: Counter
    private let netlinkMessages: Counter
    private let netlinkMalformed: Counter
    private let netlinkResyncs: Counter
    /// Every (route, code) a route can answer, made at start: counting a request looks one up
    /// without a lock.
    private let requests: [RequestKey: Counter]

    /// - Parameters:
    ///   - version: reachd's version, a label of `reachd_build_info`.
    ///   - configured: when the configuration was read (at start, the targets with it).
    public init(version: String = "unknown", configured: Date = Date()) {
        let registry = registry
        func gauge(_ name: String, _ help: String, _ labels: [(String, String)] = []) -> Gauge {
            registry.makeGauge(descriptor: Self.name(name, help), labels: labels)
        }
        func counter(_ name: String, _ help: String, _ labels: [(String, String)] = []) -> Counter {
            registry.makeCounter(descriptor: Self.name(name, help), labels: labels)
        }

        let libmicrohttpd = EngineVersion.libmicrohttpd
        gauge("build_info", Help.buildInfo, [("version", version), ("libmicrohttpd", libmicrohttpd)]).set(to: 1)

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
        statusUpdates = counter("status_updates_total", Help.statusUpdates)
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
        // A later issue reads targets from a file again; until then the one reading is at start.
        reloadSuccessful = gauge("config_last_reload_successful", Help.reloadSuccessful)
        reloadSuccessTime = gauge("config_last_reload_success_timestamp_seconds", Help.reloadSuccessTime)
        reloadSuccessful.set(to: 1)
        reloadSuccessTime.set(to: configured.timeIntervalSince1970)
        changesKept = gauge("changes_kept", Help.changesKept)
        sseClients = gauge("sse_clients", Help.sseClients)
        sseEventsSent = counter("sse_events_sent_total", Help.sseEventsSent)
        netlinkMessages = counter("netlink_messages_total", Help.netlinkMessages)
        netlinkMalformed = counter("netlink_malformed_messages_total", Help.netlinkMalformed)
        netlinkResyncs = counter("netlink_resyncs_total", Help.netlinkResyncs)

        var requests: [RequestKey: Counter] = [:]
        for (route, codes) in RouteLabel.codes {
            for code in codes {
                requests[RequestKey(route: route, code: code)] = counter(
                    "http_requests_total", Help.requests, [("route", route.rawValue), ("code", String(code))])
            }
        }
        self.requests = requests
    }

    // MARK: The document

    /// Sets every value that comes from the document: call with each new one (in order).
    public func update(_ status: ReachabilityStatus) {
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
            let current = status.connectivity[family]?.state
            for (state, gauge) in states { gauge.set(to: state == current ? 1 : 0) }
        }
        for (state, gauge) in dns { gauge.set(to: state == status.dns.state ? 1 : 0) }

        state.withLock { state in
            // The sequence counts every change, so a skipped document still counts.
            if status.sequence > state.sequence {
                statusUpdates.increment(by: Int64(status.sequence - state.sequence))
            }
            state.sequence = max(state.sequence, status.sequence)
            updateInterfaces(path.interfaces, in: &state)
            updateTargets(status.targets, in: &state)
            updateNameservers(status.dns.servers, in: &state)
        }
    }

    private func updateInterfaces(_ interfaces: [InterfaceStatus], in state: inout State) {
        var seen = Set<String>()
        for interface in interfaces where seen.insert(interface.name).inserted {
            let transport = interface.transport.rawValue
            let kind = interface.kind ?? ""
            var series =
                state.interfaces[interface.name]
                ?? InterfaceSeries(
                    up: registry.makeGauge(
                        descriptor: Self.name("interface_up", Help.interfaceUp), labels: [("device", interface.name)]),
                    info: makeInterfaceInfo(interface.name, transport: transport, kind: kind),
                    transport: transport, kind: kind)
            if series.transport != transport || series.kind != kind {
                // Another series (its labels changed): the old one must not linger at 1.
                registry.unregisterGauge(series.info)
                series.info = makeInterfaceInfo(interface.name, transport: transport, kind: kind)
                series.transport = transport
                series.kind = kind
            }
            series.up.set(to: interface.operState == "up" ? 1 : 0)
            state.interfaces[interface.name] = series
        }
        for (name, series) in state.interfaces where !seen.contains(name) {
            registry.unregisterGauge(series.up)
            registry.unregisterGauge(series.info)
            state.interfaces[name] = nil
        }
    }

    private func makeInterfaceInfo(_ device: String, transport: String, kind: String) -> Gauge {
        let info = registry.makeGauge(
            descriptor: Self.name("interface_info", Help.interfaceInfo),
            labels: [("device", device), ("transport", transport), ("kind", kind)])
        info.set(to: 1)
        return info
    }

    private func updateTargets(_ targets: [TargetStatus], in state: inout State) {
        var seen = Set<String>()
        for target in targets where seen.insert(target.name).inserted {
            var series = state.targets[target.name] ?? makeTargetSeries(target.name)
            series.up.set(to: target.state == .reachable ? 1 : 0)
            if let previous = series.state, previous != target.state { series.transitions.increment() }
            series.state = target.state
            for family in AddressFamily.allCases {
                if let status = target[family] {
                    let gauge =
                        series.families[family]
                        ?? registry.makeGauge(
                            descriptor: Self.name("target_family_up", Help.targetFamilyUp),
                            labels: [("target", target.name), ("family", family.rawValue)])
                    gauge.set(to: status.state == .reachable ? 1 : 0)
                    series.families[family] = gauge
                } else if let gauge = series.families.removeValue(forKey: family) {
                    registry.unregisterGauge(gauge)
                }
            }
            state.targets[target.name] = series
        }
        // A target removed by a reload of --targets-file takes its series with it.
        for (name, series) in state.targets where !seen.contains(name) {
            registry.unregisterGauge(series.up)
            registry.unregisterDurationHistogram(series.duration)
            registry.unregisterCounter(series.transitions)
            for counter in series.failures.values { registry.unregisterCounter(counter) }
            for gauge in series.families.values { registry.unregisterGauge(gauge) }
            state.targets[name] = nil
        }
    }

    private func updateNameservers(_ servers: [NameserverStatus], in state: inout State) {
        var seen = Set<String>()
        for server in servers where seen.insert(server.address).inserted {
            let series = state.nameservers[server.address] ?? makeNameserverSeries(server.address)
            series.up.set(to: server.state == .answering ? 1 : 0)
            state.nameservers[server.address] = series
        }
        // resolv.conf changed: a server it no longer lists is no longer asked.
        for (address, series) in state.nameservers where !seen.contains(address) {
            registry.unregisterGauge(series.up)
            registry.unregisterDurationHistogram(series.duration)
            state.nameservers[address] = nil
        }
    }

    private func makeNameserverSeries(_ address: String) -> NameserverSeries {
        NameserverSeries(
            up: registry.makeGauge(
                descriptor: Self.name("dns_server_up", Help.dnsServerUp), labels: [("server", address)]),
            duration: registry.makeDurationHistogram(
                descriptor: Self.name("dns_query_duration_seconds", Help.dnsQueryDuration),
                labels: [("server", address)], buckets: Self.nameserverBuckets))
    }

    private func makeTargetSeries(_ name: String) -> TargetSeries {
        TargetSeries(
            up: registry.makeGauge(descriptor: Self.name("target_up", Help.targetUp), labels: [("target", name)]),
            duration: registry.makeDurationHistogram(
                descriptor: Self.name("target_probe_duration_seconds", Help.probeDuration),
                labels: [("target", name)], buckets: Self.probeBuckets),
            transitions: registry.makeCounter(
                descriptor: Self.name("target_transitions_total", Help.targetTransitions), labels: [("target", name)]),
            failures: Dictionary(
                uniqueKeysWithValues: ProbeFailureReason.allCases.map { reason in
                    let counter = registry.makeCounter(
                        descriptor: Self.name("target_probe_failures_total", Help.probeFailures),
                        labels: [("target", name), ("reason", reason.rawValue)])
                    return (reason, counter)
                }))
    }

    // MARK: Other sources

    /// Adds what the netlink source did since the last call: call after every batch and change.
    public func recordSource(_ statistics: SourceStatistics) {
        state.withLock { state in
            let last = state.source
            netlinkMessages.increment(by: Int64(max(0, statistics.messages - last.messages)))
            netlinkMalformed.increment(by: Int64(max(0, statistics.malformedMessages - last.malformedMessages)))
            netlinkResyncs.increment(by: Int64(max(0, statistics.resyncs - last.resyncs)))
            state.source = statistics
        }
    }

    /// One finished probe of one family of a target: its duration, name resolution included, and
    /// why it failed (`nil`: it succeeded) — counted even while a threshold keeps the state.
    public func recordProbe(target: String, duration: Duration, failure: ProbeFailureReason?) {
        let series = state.withLock { state in
            if let series = state.targets[target] { return series }
            let series = makeTargetSeries(target)
            state.targets[target] = series
            return series
        }
        series.duration.record(duration)
        if let failure { series.failures[failure]?.increment() }
    }

    /// One finished query to a nameserver (`--dns-check`), answered or not.
    public func recordNameserverQuery(server: String, duration: Duration) {
        let histogram = state.withLock { state in
            if let series = state.nameservers[server] { return series.duration }
            let series = makeNameserverSeries(server)
            state.nameservers[server] = series
            return series.duration
        }
        histogram.record(duration)
    }

    /// A reading of the configuration (the command line at start, `--targets-file` on a reload):
    /// `reachd_config_last_reload_successful` says whether the last one was applied (0 until a
    /// good one is read), `…_success_timestamp_seconds` when the last good one was (Prometheus'
    /// and blackbox_exporter's names and meaning). Both exist from the start (`init`).
    public func recordConfigReload(successful: Bool, at time: Date) {
        reloadSuccessful.set(to: successful ? 1 : 0)
        if successful { reloadSuccessTime.set(to: time.timeIntervalSince1970) }
    }

    /// `reachd_web_config_last_reload_successful`: whether the last reading of
    /// `--web-config-file` was applied. Made on the first call: without a web config the series
    /// does not exist.
    public func recordWebConfigReload(successful: Bool) {
        registry.makeGauge(descriptor: Self.name("web_config_last_reload_successful", Help.webConfigReload))
            .set(to: successful ? 1 : 0)
    }

    /// `reachd_changes_kept`: how many changes `/changes` holds now.
    func recordChangesKept(_ count: Int) {
        changesKept.set(to: Double(count))
    }

    /// `count` status events handed to `/events` clients.
    func eventsSent(_ count: Int) {
        if count > 0 { sseEventsSent.increment(by: Int64(count)) }
    }

    /// One answered request.
    func countRequest(_ route: Route, status: Int) {
        count(RouteLabel(route), status: status)
    }

    /// A CORS preflight, which never reaches routing.
    func countPreflight(status: Int) {
        count(.preflight, status: status)
    }

    private func count(_ label: RouteLabel, status: Int) {
        let key = RequestKey(route: label, code: status)
        let counter =
            requests[key]
            ?? registry.makeCounter(
                descriptor: Self.name("http_requests_total", Help.requests),
                labels: [("route", key.route.rawValue), ("code", String(status))])
        counter.increment()
    }

    // MARK: Rendering

    /// The text format of every series, families by name and series by labels (`ExpositionOrder`);
    /// `sseClients` is the number of open streams right now.
    func render(sseClients clients: Int) -> [UInt8] {
        sseClients.set(to: Double(clients))
        var buffer: [UInt8] = []
        buffer.reserveCapacity(8192)
        registry.emit(into: &buffer)
        return ExpositionOrder.ordered(buffer)
    }

    /// The response to `GET /metrics`.
    func response(sseClients: Int) -> HTTPResponse {
        HTTPResponse(
            status: 200,
            headers: [HTTPField("Content-Type", Self.contentType), HTTPField("Cache-Control", "no-store")],
            body: render(sseClients: sseClients))
    }

    private static func name(_ name: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "reachd", metricName: name, unitName: "", helpText: help)
    }
}

/// The HELP text of every family (one place, so every series of a family shares it).
private enum Help {
    static let buildInfo = "reachd's version and the libmicrohttpd it runs on; always 1."
    static let state = "1 on the current route-based state of the network (unknown, reachable, unreachable)."
    static let family =
        "1 when the kernel has a usable route to the outside world for this address family."
    static let transport = "1 when outside traffic leaves through an interface of this transport."
    static let dataMetered = "1 when outside traffic leaves through a metered (cellular or configured) interface."
    static let statusUpdates = "Changes of the status document since start (its sequence number)."
    static let lastChange = "When the status document last changed, in seconds since the Unix epoch."
    static let interfaceUp = "1 when the interface's operational state is up (as node_network_up)."
    static let interfaceInfo = "Each interface's transport and link kind; always 1."
    static let targetUp = "1 when the target is reachable, 0 when unreachable or not yet evaluated."
    static let probeDuration = "How long a probe of the target took, name resolution included."
    static let connectivity =
        "1 on the current state of the connectivity check (disabled, unknown, none, limited, portal, full)."
    static let targetFamilyUp =
        "1 when this address family of the target is reachable; present while the target's addresses hold one of it."
    static let targetTransitions = "Changes of the target's state (unknown, reachable, unreachable) between documents."
    static let probeFailures =
        "Failed probes of the target by reason, each family's counted, also while a threshold keeps its state."
    static let connectivityFamily =
        "1 on the current state of the connectivity check for this address family; all 0 while the URL's host has no address of it."
    static let dns = "1 on the current state of DNS (disabled, unknown, ok, degraded, failing)."
    static let dnsServerUp = "1 when the nameserver answers the --dns-check query, 0 when failing or not asked yet."
    static let dnsQueryDuration = "How long a query to the nameserver took, until its answer or the timeout."
    static let reloadSuccessful = "1 when the last reading of the configuration was applied, 0 when it was refused."
    static let reloadSuccessTime = "When the configuration was last applied, in seconds since the Unix epoch."
    static let sseClients = "Open /events streams."
    static let changesKept = "Changes of the status document that /changes holds (at most --history)."
    static let webConfigReload =
        "1 when the last reading of --web-config-file (and the files it names) was applied, 0 when it was refused."
    static let sseEventsSent = "Status events handed to /events streams, the first of each stream included."
    static let netlinkMessages = "Valid rtnetlink messages read from the kernel."
    static let netlinkMalformed = "rtnetlink messages skipped as malformed."
    static let netlinkResyncs = "Full dumps after the kernel reported lost notifications (ENOBUFS)."
    static let requests = "HTTP requests answered, by route (a fixed set) and status code."
}
