import Prometheus
import Reachable
import Synchronization

/// What the netlink source read from the kernel (messages, malformed ones, resyncs after lost
/// notifications), as counters: the source keeps running totals, these add what is new since
/// the last reading.
final class NetlinkMetrics: Sendable {
    private let messages: Counter
    private let malformed: Counter
    private let resyncs: Counter
    /// The totals of the last reading.
    private let last = Mutex(SourceStatistics())

    init(registry: PrometheusCollectorRegistry) {
        func counter(_ name: String, _ help: String) -> Counter {
            registry.makeCounter(descriptor: .reachd(name, help: help), labels: [])
        }
        messages = counter("netlink_messages_total", Help.netlinkMessages)
        malformed = counter("netlink_malformed_messages_total", Help.netlinkMalformed)
        resyncs = counter("netlink_resyncs_total", Help.netlinkResyncs)
    }

    /// Adds what the source did since the last call.
    func record(_ statistics: SourceStatistics) {
        last.withLock { last in
            messages.increment(by: Int64(max(0, statistics.messages - last.messages)))
            malformed.increment(by: Int64(max(0, statistics.malformedMessages - last.malformedMessages)))
            resyncs.increment(by: Int64(max(0, statistics.resyncs - last.resyncs)))
            last = statistics
        }
    }
}

/// The HELP text of each family (one place, so every series of a family shares it).
private enum Help {
    static let netlinkMessages = "Valid rtnetlink messages read from the kernel."
    static let netlinkMalformed = "rtnetlink messages skipped as malformed."
    static let netlinkResyncs = "Full dumps after the kernel reported lost notifications (ENOBUFS)."
}
