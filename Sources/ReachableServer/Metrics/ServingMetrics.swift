import Prometheus

/// What the server itself did: requests answered by route and status code, `/events` streams
/// open and the events handed to them, the changes `/changes` holds. Every request is counted
/// here, so counting one is a dictionary look-up and an atomic increment: the series of every
/// (route, code) a route can answer are made at start, and no lock is taken.
///
/// Label values are never taken from a request: `route` is one of a fixed set (`RouteLabel`).
final class ServingMetrics: Sendable {
    /// A `reachd_http_requests_total` series.
    private struct RequestKey: Hashable {
        var route: RouteLabel
        var code: Int
    }

    private let registry: PrometheusCollectorRegistry
    private let requests: [RequestKey: Counter]
    private let sseClients: Gauge
    private let sseEventsSent: Counter
    private let changesKept: Gauge

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        changesKept = registry.makeGauge(descriptor: .reachd("changes_kept", help: Help.changesKept), labels: [])
        sseClients = registry.makeGauge(descriptor: .reachd("sse_clients", help: Help.sseClients), labels: [])
        sseEventsSent = registry.makeCounter(
            descriptor: .reachd("sse_events_sent_total", help: Help.sseEventsSent), labels: [])
        var requests: [RequestKey: Counter] = [:]
        for (route, codes) in RouteLabel.codes {
            for code in codes {
                requests[RequestKey(route: route, code: code)] = registry.makeCounter(
                    descriptor: .reachd("http_requests_total", help: Help.requests),
                    labels: [("route", route.rawValue), ("code", String(code))])
            }
        }
        self.requests = requests
    }

    /// One answered request; a code no route was expected to answer gets its series now.
    func countRequest(_ label: RouteLabel, status: Int) {
        let key = RequestKey(route: label, code: status)
        let counter =
            requests[key]
            ?? registry.makeCounter(
                descriptor: .reachd("http_requests_total", help: Help.requests),
                labels: [("route", key.route.rawValue), ("code", String(status))])
        counter.increment()
    }

    /// `count` status events handed to `/events` clients.
    func countEventsSent(_ count: Int) {
        if count > 0 { sseEventsSent.increment(by: Int64(count)) }
    }

    /// How many `/events` streams are open now: set when a scrape is answered.
    func setStreamsOpen(_ count: Int) {
        sseClients.set(to: Double(count))
    }

    /// How many changes `/changes` holds now.
    func setChangesKept(_ count: Int) {
        changesKept.set(to: Double(count))
    }
}

/// The HELP text of each family (one place, so every series of a family shares it).
private enum Help {
    static let sseClients = "Open /events streams."
    static let changesKept = "Changes of the status document that /changes holds (at most --history)."
    static let sseEventsSent = "Status events handed to /events streams, the first of each stream included."
    static let requests = "HTTP requests answered, by route (a fixed set) and status code."
}
