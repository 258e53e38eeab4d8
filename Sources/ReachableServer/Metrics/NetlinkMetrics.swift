import Reachable
import Synchronization

/// What the netlink source read from the kernel (messages, malformed ones, resyncs after lost
/// notifications), as counters: the source keeps running totals, these add what is new since
/// the last reading (never less: a counter only grows).
final class NetlinkMetrics: Sendable {
    private struct Counts {
        var messages = 0
        var malformed = 0
        var resyncs = 0
        /// The totals of the last reading.
        var last = SourceStatistics()
    }

    private let counts = Mutex(Counts())

    init() {}

    /// Adds what the source did since the last call.
    func record(_ statistics: SourceStatistics) {
        counts.withLock { counts in
            counts.messages += max(0, statistics.messages - counts.last.messages)
            counts.malformed += max(0, statistics.malformedMessages - counts.last.malformedMessages)
            counts.resyncs += max(0, statistics.resyncs - counts.last.resyncs)
            counts.last = statistics
        }
    }

    func write(into out: inout ExpositionWriter) {
        let counts = counts.withLock { $0 }
        out.family("netlink_messages_total", .counter, Help.netlinkMessages)
        out.counter("netlink_messages_total", count: counts.messages)
        out.family("netlink_malformed_messages_total", .counter, Help.netlinkMalformed)
        out.counter("netlink_malformed_messages_total", count: counts.malformed)
        out.family("netlink_resyncs_total", .counter, Help.netlinkResyncs)
        out.counter("netlink_resyncs_total", count: counts.resyncs)
    }
}

/// The HELP text of each family (one place, so every series of a family shares it).
private enum Help {
    static let netlinkMessages = "Valid rtnetlink messages read from the kernel."
    static let netlinkMalformed = "rtnetlink messages skipped as malformed."
    static let netlinkResyncs = "Full dumps after the kernel reported lost notifications (ENOBUFS)."
}
