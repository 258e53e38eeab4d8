import Synchronization

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

    /// One counter, shared by reference from the table made at start.
    private final class Count: Sendable {
        let value = Atomic<Int>(0)
    }

    /// The series made at start, in the order they are written (`RouteLabel.codes`).
    private let expected: [(key: RequestKey, count: Count)]
    private let byKey: [RequestKey: Count]
    /// Codes no route was expected to answer, in the order they first came.
    private let unexpected = Mutex<[(key: RequestKey, count: Int)]>([])
    private let eventsSent = Atomic<Int>(0)
    private let changesKept = Atomic<Int>(0)

    init() {
        expected = RouteLabel.codes.flatMap { route, codes in
            codes.map { (RequestKey(route: route, code: $0), Count()) }
        }
        byKey = Dictionary(uniqueKeysWithValues: expected.map { ($0.key, $0.count) })
    }

    /// One answered request.
    func countRequest(_ label: RouteLabel, status: Int) {
        let key = RequestKey(route: label, code: status)
        if let count = byKey[key] {
            count.value.wrappingAdd(1, ordering: .relaxed)
            return
        }
        unexpected.withLock { unexpected in
            if let index = unexpected.firstIndex(where: { $0.key == key }) {
                unexpected[index].count += 1
            } else {
                unexpected.append((key, 1))
            }
        }
    }

    /// `count` status events handed to `/events` clients.
    func countEventsSent(_ count: Int) {
        eventsSent.wrappingAdd(count, ordering: .relaxed)
    }

    /// How many changes `/changes` holds now.
    func setChangesKept(_ count: Int) {
        changesKept.store(count, ordering: .relaxed)
    }

    /// The server's series; `sseClients` is the number of open streams right now.
    func write(sseClients: Int, into out: inout ExpositionWriter) {
        out.family("changes_kept", .gauge, Help.changesKept)
        out.gauge("changes_kept", value: Double(changesKept.load(ordering: .relaxed)))
        out.family("sse_clients", .gauge, Help.sseClients)
        out.gauge("sse_clients", value: Double(sseClients))
        out.family("sse_events_sent_total", .counter, Help.sseEventsSent)
        out.counter("sse_events_sent_total", count: eventsSent.load(ordering: .relaxed))
        out.family("http_requests_total", .counter, Help.requests)
        let requests =
            expected.map { ($0.key, $0.count.value.load(ordering: .relaxed)) } + unexpected.withLock { $0 }
        for (key, count) in requests {
            out.counter("http_requests_total", ("route", key.route.rawValue), ("code", String(key.code)), count: count)
        }
    }
}

/// The HELP text of each family (one place, so every series of a family shares it).
private enum Help {
    static let sseClients = "Open /events streams."
    static let changesKept = "Changes of the status document that /changes holds (at most --history)."
    static let sseEventsSent = "Status events handed to /events streams, the first of each stream included."
    static let requests = "HTTP requests answered, by route (a fixed set) and status code."
}
