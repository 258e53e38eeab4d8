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
/// start, at 0; the series of an interface that is gone are removed.
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

    /// What `update` and `recordSource` keep between calls.
    private struct State {
        var sequence: UInt64 = 0
        var source = SourceStatistics()
        var interfaces: [String: InterfaceSeries] = [:]
        var targets: [String: TargetSeries] = [:]
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
    private let sseClients: Gauge
    private let sseEventsSent: Counter
    private let netlinkMessages: Counter
    private let netlinkMalformed: Counter
    private let netlinkResyncs: Counter
    /// Every (route, code) a route can answer, made at start: counting a request looks one up
    /// without a lock.
    private let requests: [RequestKey: Counter]

    /// - Parameter version: reachd's version, a label of `reachd_build_info`.
    public init(version: String = "unknown") {
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

        state.withLock { state in
            // The sequence counts every change, so a skipped document still counts.
            if status.sequence > state.sequence {
                statusUpdates.increment(by: Int64(status.sequence - state.sequence))
            }
            state.sequence = max(state.sequence, status.sequence)
            updateInterfaces(path.interfaces, in: &state)
            updateTargets(status.targets, in: &state)
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
            let series = state.targets[target.name] ?? makeTargetSeries(target.name)
            series.up.set(to: target.state == .reachable ? 1 : 0)
            state.targets[target.name] = series
        }
        // A target removed by a reload of --targets-file takes its series with it.
        for (name, series) in state.targets where !seen.contains(name) {
            registry.unregisterGauge(series.up)
            registry.unregisterDurationHistogram(series.duration)
            state.targets[name] = nil
        }
    }

    private func makeTargetSeries(_ name: String) -> TargetSeries {
        TargetSeries(
            up: registry.makeGauge(descriptor: Self.name("target_up", Help.targetUp), labels: [("target", name)]),
            duration: registry.makeDurationHistogram(
                descriptor: Self.name("target_probe_duration_seconds", Help.probeDuration),
                labels: [("target", name)], buckets: Self.probeBuckets))
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

    /// One finished probe of a target (successful or not): its duration, name resolution included.
    public func recordProbe(target: String, duration: Duration) {
        let histogram = state.withLock { state in
            if let series = state.targets[target] { return series.duration }
            let series = makeTargetSeries(target)
            state.targets[target] = series
            return series.duration
        }
        histogram.record(duration)
    }

    /// A reading of the configuration (the command line at start, `--targets-file` on a reload):
    /// `reachd_config_last_reload_successful` says whether the last one was applied (0 until a
    /// good one is read), `…_success_timestamp_seconds` when the last good one was. Call once at
    /// start, so both exist from then on (Prometheus' and blackbox_exporter's names and meaning).
    public func recordConfigReload(successful: Bool, at time: Date) {
        let outcome = registry.makeGauge(
            descriptor: Self.name(
                "config_last_reload_successful", "1 when the last reading of the configuration was applied, else 0."))
        let lastSuccess = registry.makeGauge(
            descriptor: Self.name(
                "config_last_reload_success_timestamp_seconds",
                "When the configuration was last applied, in seconds since the Unix epoch."))
        outcome.set(to: successful ? 1 : 0)
        if successful { lastSuccess.set(to: time.timeIntervalSince1970) }
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

    /// The text format of every series; `sseClients` is the number of open streams right now.
    func render(sseClients clients: Int) -> [UInt8] {
        sseClients.set(to: Double(clients))
        var buffer: [UInt8] = []
        buffer.reserveCapacity(8192)
        registry.emit(into: &buffer)
        return buffer
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
    static let sseClients = "Open /events streams."
    static let sseEventsSent = "Status events handed to /events streams, the first of each stream included."
    static let netlinkMessages = "Valid rtnetlink messages read from the kernel."
    static let netlinkMalformed = "rtnetlink messages skipped as malformed."
    static let netlinkResyncs = "Full dumps after the kernel reported lost notifications (ENOBUFS)."
    static let requests = "HTTP requests answered, by route (a fixed set) and status code."
}
