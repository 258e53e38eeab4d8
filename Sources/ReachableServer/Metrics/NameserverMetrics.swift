import Reachable
import Synchronization

/// The series of each nameserver `--dns-check` asks, labelled by its address: whether it answers
/// (from the document) and how long its queries take (from the probes). Made with the first
/// document or query that names the server; removed when resolv.conf no longer lists it.
final class NameserverMetrics: Sendable {
    /// Bucket bounds of the nameserver queries: 1 ms (a server beside us) to 5 s (the query
    /// timeout is 2 s by default); as many as `QueryDurationCounts` holds.
    static let buckets: [Duration] = [
        .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
        .milliseconds(2500), .seconds(5),
    ]
    private static let bounds = buckets.map(\.inSeconds)
    private typealias QueryDurationCounts = DurationCounts<12>

    private let byAddress = Mutex(KeyedSeries<QueryDurationCounts>())

    init() {}

    /// Keeps the series of `servers` (the document's), and removes those of servers not in it.
    func update(_ servers: [NameserverStatus]) {
        byAddress.withLock { known in
            known.update(servers, key: \.address, make: { _ in QueryDurationCounts() }, update: { _, _ in })
        }
    }

    /// One finished query to `server`, answered or not.
    func recordQuery(server: String, duration: Duration) {
        byAddress.withLock { known in
            known.modify(server, make: { _ in QueryDurationCounts() }) { $0.record(duration, bounds: Self.buckets) }
        }
    }

    /// Every server's series; `servers` are the document's (a server it does not list reads 0).
    func write(_ servers: [NameserverStatus], into out: inout ExpositionWriter) {
        let known = byAddress.withLock { $0.all }
        out.family("dns_server_up", .gauge, Help.dnsServerUp)
        for (address, _) in known {
            let answering = servers.contains { $0.address == address && $0.state == .answering }
            out.flag("dns_server_up", ("server", address), holds: answering)
        }
        out.family("dns_query_duration_seconds", .histogram, Help.dnsQueryDuration)
        for (address, counts) in known {
            out.histogram("dns_query_duration_seconds", ("server", address), counts: counts, bounds: Self.bounds)
        }
    }
}

/// The HELP text of each family (one place, so every series of a family shares it).
private enum Help {
    static let dnsServerUp = "1 when the nameserver answers the --dns-check query, 0 when failing or not asked yet."
    static let dnsQueryDuration = "How long a query to the nameserver took, until its answer or the timeout."
}
