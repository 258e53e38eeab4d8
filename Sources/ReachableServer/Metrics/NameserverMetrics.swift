import Prometheus
import Reachable
import Synchronization

/// The series of each nameserver `--dns-check` asks, labelled by its address: whether it answers
/// (from the document) and how long its queries take (from the probes). Made with the first
/// document or query that names the server; removed when resolv.conf no longer lists it.
final class NameserverMetrics: Sendable {
    /// Bucket bounds of the nameserver queries: 1 ms (a server beside us) to 5 s (the query
    /// timeout is 2 s by default).
    static let buckets: [Duration] = [
        .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
        .milliseconds(2500), .seconds(5),
    ]

    private struct Series {
        var up: Gauge
        var duration: DurationHistogram
    }

    private let registry: PrometheusCollectorRegistry
    private let byAddress = Mutex(KeyedSeries<Series>())

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
    }

    /// Sets the series of `servers` (the document's), and removes those of servers not in it.
    func update(_ servers: [NameserverStatus]) {
        byAddress.withLock { known in
            known.update(
                servers, key: \.address, make: { makeSeries($0.address) },
                update: { series, server in series.up.set(to: server.state == .answering ? 1 : 0) },
                // resolv.conf changed: a server it no longer lists is no longer asked.
                remove: { series in
                    registry.unregisterGauge(series.up)
                    registry.unregisterDurationHistogram(series.duration)
                })
        }
    }

    /// One finished query to `server`, answered or not. Recorded outside the lock.
    func recordQuery(server: String, duration: Duration) {
        byAddress.withLock { $0.series(server, make: makeSeries) }.duration.record(duration)
    }

    private func makeSeries(_ address: String) -> Series {
        Series(
            up: registry.makeGauge(
                descriptor: .reachd("dns_server_up", help: Help.dnsServerUp), labels: [("server", address)]),
            duration: registry.makeDurationHistogram(
                descriptor: .reachd("dns_query_duration_seconds", help: Help.dnsQueryDuration),
                labels: [("server", address)], buckets: Self.buckets))
    }
}

/// The HELP text of each family (one place, so every series of a family shares it).
private enum Help {
    static let dnsServerUp = "1 when the nameserver answers the --dns-check query, 0 when failing or not asked yet."
    static let dnsQueryDuration = "How long a query to the nameserver took, until its answer or the timeout."
}
