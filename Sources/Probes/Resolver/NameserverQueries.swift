import CProbeLibraries
import Glibc
public import Reachable

/// What one nameserver answered to the check's query.
public struct NameserverAnswer: Sendable, Equatable {
    /// The server asked.
    public var server: IPAddress
    /// `nil`: a well-formed answer with rcode NOERROR or NXDOMAIN (the server works).
    public var failure: DNSFailureReason?
    /// c-ares' message, for logs.
    public var detail: String?
    public var duration: Duration
    /// The engine stopped before the answer came.
    public var wasCancelled: Bool

    public init(
        server: IPAddress, failure: DNSFailureReason?, detail: String? = nil, duration: Duration = .zero,
        wasCancelled: Bool = false
    ) {
        self.server = server
        self.failure = failure
        self.detail = detail
        self.duration = duration
        self.wasCancelled = wasCancelled
    }
}

/// The nameserver check's queries (`--dns-check`): one c-ares channel per nameserver, each asking
/// that server alone, driven by the engine thread beside the resolver's channel. Used on the
/// engine thread only.
final class NameserverQueries {
    private let port: UInt16?
    private var channels: [IPAddress: AresChannel] = [:]
    private var pending: [Query] = []

    /// - Parameter port: a test's nameserver port; `nil` is 53, as resolv.conf means.
    init(port: UInt16?) {
        self.port = port
    }

    /// Asks `server` for the A record of `name`; `completion` is called once, on the engine thread.
    func ask(
        _ server: IPAddress, name: String, timeout: Duration, completion: @escaping @Sendable (NameserverAnswer) -> Void
    ) {
        let query = Query(server: server, deadline: .now + timeout, completion: completion)
        let channel: AresChannel
        if let existing = channels[server] {
            channel = existing
        } else {
            do {
                channel = try AresChannel(server: server, port: port, timeout: timeout)
            } catch {
                return query.finish(failure: .error, detail: error.description)
            }
            channels[server] = channel
        }
        pending.append(query)
        channel.queryA(name, context: Unmanaged.passRetained(Call(query: query, channel: channel)).toOpaque()) {
            context, status, _, answer, length in
            let call = Unmanaged<Call>.fromOpaque(context!).takeRetainedValue()
            call.channel.outstanding -= 1
            // c-ares hands a NOERROR answer over unparsed: a cut-off record is still "success".
            let wellFormed =
                status != ARES_SUCCESS
                ? status : reachd_ares_parse_a_reply(answer, length, nil, nil, nil)
            let (failure, detail, cancelled) = NameserverQueries.judge(
                status: wellFormed == ARES_ENODATA ? ARES_SUCCESS : wellFormed)
            call.query.finish(failure: failure, detail: detail, wasCancelled: cancelled)
        }
    }

    /// Forgets the channels of servers resolv.conf no longer lists (once their queries ended).
    func keep(only servers: Set<IPAddress>) {
        for (server, channel) in channels where !servers.contains(server) && channel.outstanding == 0 {
            channel.destroy()
            channels[server] = nil
        }
    }

    func appendWaitDescriptors(to descriptors: inout [curl_waitfd]) {
        for channel in channels.values { channel.appendWaitDescriptors(to: &descriptors) }
    }

    func process(_ descriptors: [curl_waitfd]) {
        for descriptor in descriptors where descriptor.revents != 0 {
            for channel in channels.values { channel.process(descriptor) }
        }
    }

    /// c-ares' own timeouts, then the check's deadlines.
    func processTimeouts(now: ContinuousClock.Instant) {
        for channel in channels.values { channel.processTimeouts() }
        for query in pending where !query.isFinished && query.deadline <= now {
            query.finish(failure: .timeout, detail: "no answer before the deadline")
        }
        pending.removeAll { $0.isFinished }
    }

    func nextWakeUp(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        var earliest = pending.lazy.filter { !$0.isFinished }.map(\.deadline).min()
        for channel in channels.values {
            if let timeout = channel.nextTimeout() { earliest = min(earliest ?? now + timeout, now + timeout) }
        }
        return earliest
    }

    func shutdown() {
        for channel in channels.values { channel.destroy() }
        channels = [:]
        for query in pending where !query.isFinished {
            query.finish(failure: .error, detail: "the engine stopped", wasCancelled: true)
        }
        pending = []
    }

    /// c-ares' status for one query, as the contract's reasons (and whether it was cancelled).
    static func judge(status: Int32) -> (DNSFailureReason?, String?, Bool) {
        let detail = String(cString: reachd_ares_strerror(status))
        switch status {
        // NOERROR with or without data, NXDOMAIN: the server answered.
        case ARES_SUCCESS, ARES_ENODATA, ARES_ENOTFOUND: return (nil, nil, false)
        // A malformed answer (a record cut off, a wrong question).
        case ARES_EBADRESP: return (.error, "malformed answer: \(detail)", false)
        case ARES_ESERVFAIL: return (.servfail, detail, false)
        // REFUSED, or the port closed (ICMP port unreachable).
        case ARES_EREFUSED, ARES_ECONNREFUSED: return (.refused, detail, false)
        case ARES_ETIMEOUT: return (.timeout, detail, false)
        case ARES_EDESTRUCTION, ARES_ECANCELLED: return (.error, detail, true)
        default: return (.error, detail, false)
        }
    }
}

/// One query: completed once, by c-ares, its deadline or shutdown, whichever comes first.
private final class Query {
    let server: IPAddress
    let deadline: ContinuousClock.Instant
    let started = ContinuousClock.now
    private let completion: @Sendable (NameserverAnswer) -> Void
    private(set) var isFinished = false

    init(
        server: IPAddress, deadline: ContinuousClock.Instant,
        completion: @escaping @Sendable (NameserverAnswer) -> Void
    ) {
        self.server = server
        self.deadline = deadline
        self.completion = completion
    }

    func finish(failure: DNSFailureReason?, detail: String? = nil, wasCancelled: Bool = false) {
        guard !isFinished else { return }
        isFinished = true
        completion(
            NameserverAnswer(
                server: server, failure: failure, detail: detail, duration: .now - started,
                wasCancelled: wasCancelled))
    }
}

private final class Call {
    let query: Query
    let channel: AresChannel
    init(query: Query, channel: AresChannel) {
        self.query = query
        self.channel = channel
    }
}
