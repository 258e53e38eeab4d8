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
    public var detail: String? = nil
    public var duration: Duration = .zero
    /// The engine stopped before the answer came.
    public var wasCancelled = false
}

/// The nameserver check's queries (`--dns-check`): one c-ares channel per nameserver, each asking
/// that server alone, driven by the engine thread beside the resolver's channel. Used on the
/// engine thread only.
final class NameserverQueries {
    private let port: UInt16?
    private var channels: [IPAddress: AresChannel] = [:]
    private var pending = PendingQueries<NameserverAnswer>()

    private let problem: @Sendable (String) -> Void
    /// The last refusal said for each server, so a server that stays unaskable is logged once.
    private var saidProblems: [IPAddress: String] = [:]

    /// - Parameters:
    ///   - port: a test's nameserver port; `nil` is 53, as resolv.conf means.
    ///   - problem: told when c-ares will not ask a server (the channel cannot be made).
    init(port: UInt16?, problem: @escaping @Sendable (String) -> Void = { _ in }) {
        self.port = port
        self.problem = problem
    }

    /// Asks `server` for the A record of `name`; `completion` is called once, on the engine thread.
    func ask(
        _ server: IPAddress, name: String, timeout: Duration, completion: @escaping @Sendable (NameserverAnswer) -> Void
    ) {
        let query = PendingQuery(
            deadline: .now + timeout,
            timedOut: NameserverAnswer(server: server, failure: .timeout, detail: "no answer before the deadline"),
            cancelled: NameserverAnswer(
                server: server, failure: .error, detail: "the engine stopped", wasCancelled: true),
            completion: completion)
        let channel: AresChannel
        if let existing = channels[server] {
            channel = existing
        } else {
            forgetIdleChannels()
            do {
                channel = try AresChannel(server: server, port: port, timeout: timeout)
            } catch {
                if saidProblems[server] != error.description { problem(error.description) }
                saidProblems[server] = error.description
                return query.finish(NameserverAnswer(server: server, failure: .error, detail: error.description))
            }
            saidProblems[server] = nil
            channels[server] = channel
        }
        pending.append(query)
        let context = Unmanaged.passRetained(PendingQuery.Call(query: query, channel: channel)).toOpaque()
        channel.queryA(name, context: context) { context, status, _, answer, length in
            let call = Unmanaged<PendingQuery<NameserverAnswer>.Call>.fromOpaque(context!).takeRetainedValue()
            call.channel.outstanding -= 1
            // c-ares hands a NOERROR answer over unparsed: a cut-off record is still "success".
            let wellFormed =
                status != ARES_SUCCESS
                ? status : reachd_ares_parse_a_reply(answer, length, nil, nil, nil)
            let (failure, detail, cancelled) = NameserverQueries.judge(
                status: wellFormed == ARES_ENODATA ? ARES_SUCCESS : wellFormed)
            // A C callback captures nothing: the server comes with the query (its timeout answer).
            var answer = call.query.timedOut
            (answer.failure, answer.detail, answer.wasCancelled) = (failure, detail, cancelled)
            call.query.finish(answer)
        }
    }

    /// A channel per server asked lately: when resolv.conf has moved on past a few servers, the
    /// idle channels of the old ones go (at most glibc's three servers, twice over, are kept).
    private func forgetIdleChannels() {
        guard channels.count >= 2 * ResolvConf.maximumServers else { return }
        for (server, channel) in channels where channel.outstanding == 0 {
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
        pending.expire(now: now)
    }

    func nextWakeUp(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        pending.nextWakeUp(now: now, channels: Array(channels.values))
    }

    func shutdown() {
        for channel in channels.values { channel.destroy() }
        channels = [:]
        pending.cancelAll()
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
