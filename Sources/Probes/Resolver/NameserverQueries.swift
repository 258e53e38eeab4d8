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
/// that server alone, driven by the engine thread beside the resolver's channels. A server that
/// left resolv.conf has its channel dropped once idle. Used on the engine thread only.
final class NameserverQueries {
    private let port: UInt16?
    /// Ten idle minutes: far longer than any `--dns-interval` a server is asked at.
    let channels = AresChannels(idleLifetime: .seconds(600))

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
        do {
            channel = try channels.channel(for: server) { () throws(ResolverError) in
                let made = try AresChannel(server: server, port: port, timeout: timeout)
                saidProblems[server] = nil
                return made
            }
        } catch {
            if saidProblems[server] != error.description { problem(error.description) }
            saidProblems[server] = error.description
            return query.finish(NameserverAnswer(server: server, failure: .error, detail: error.description))
        }
        channels.track(query)
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
