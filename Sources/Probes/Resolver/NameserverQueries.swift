import CProbeLibraries
import Glibc
public import Reachable

/// One query to one nameserver alone: the nameserver check's A query, or a `dns://` target's.
public struct NameserverQuestion: Sendable, Hashable {
    public var server: IPAddress
    /// `nil`: the nameserver check's port (53, or a test's).
    public var port: UInt16?
    /// Asked exactly as given (no search list).
    public var name: String
    /// The query type's number (1: A, 28: AAAA, …).
    public var type: UInt16
    /// The way out (a pinned `dns://` target binds its socket as the resolver does).
    public var way: ResolverWay
    /// A router's destination unreachable ends the query at once, its errno in `socketError`
    /// (`dns://`: `host-unreachable`); otherwise only a port unreachable does, as for the
    /// nameserver check, whose reasons have no `host-unreachable`.
    public var hearsRouterErrors: Bool

    public init(
        server: IPAddress, port: UInt16? = nil, name: String, type: UInt16 = 1, way: ResolverWay = ResolverWay(),
        hearsRouterErrors: Bool = false
    ) {
        self.server = server
        self.port = port
        self.name = name
        self.type = type
        self.way = way
        self.hearsRouterErrors = hearsRouterErrors
    }
}

/// What one nameserver answered to one query.
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
    /// The answer as received, whatever its rcode; `nil` when none came. A `dns://` target reads
    /// its records from it.
    public var message: [UInt8]? = nil
    /// When c-ares could not send or receive (it says `ECONNREFUSED` for every socket error):
    /// the errno the socket itself reported — ECONNREFUSED for an ICMP port unreachable,
    /// EHOSTUNREACH or ENETUNREACH for a router's destination unreachable; 0 otherwise.
    public var socketError: Int32 = 0

    /// What a question under way or not yet asked comes to when the engine stops.
    static func engineStopped(server: IPAddress) -> NameserverAnswer {
        NameserverAnswer(server: server, failure: .error, detail: "the engine stopped", wasCancelled: true)
    }
}

/// Queries to one nameserver alone: the nameserver check's (`--dns-check`) and `dns://`
/// targets'. One c-ares channel per server, port and way out, each asking that server alone,
/// driven by the engine thread beside the resolver's channels. A channel not used for ten
/// minutes (a server that left resolv.conf, a target removed) is dropped. Engine thread only.
final class NameserverQueries: EngineDriver {
    private let port: UInt16?
    /// Ten idle minutes: far longer than any `--dns-interval` a server is asked at.
    private let channels: AresChannels

    private let problem: @Sendable (String) -> Void
    /// The last refusal said for each server, so a server that stays unaskable is logged once.
    private var saidProblems: [IPAddress: String] = [:]

    /// The nameserver check's port comes from the resolver's configuration (`nil`: 53, as
    /// resolv.conf means; a test's own); the problem is told when a channel cannot be made.
    init(settings: EngineSettings) {
        port = settings.resolver.serverPort
        problem = settings.resolverProblem
        channels = AresChannels(idleLifetime: .seconds(600), loop: settings.loop)
    }

    /// Asks the question's server alone; `completion` is called once, on the engine thread.
    func ask(
        _ question: NameserverQuestion, timeout: Duration, completion: @escaping @Sendable (NameserverAnswer) -> Void
    ) {
        let server = question.server
        let port = question.port ?? self.port
        let query = PendingQuery(
            deadline: .now + timeout,
            timedOut: NameserverAnswer(server: server, failure: .timeout, detail: "no answer before the deadline"),
            cancelled: .engineStopped(server: server),
            completion: completion)
        let channel: AresChannel
        let key = ChannelKey(
            server: server, port: port, way: question.way, hearsRouterErrors: question.hearsRouterErrors)
        do {
            channel = try channels.channel(for: key) { () throws(ResolverError) in
                let made = try AresChannel(
                    server: server, port: port, timeout: timeout, way: question.way,
                    hearsRouterErrors: question.hearsRouterErrors)
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
        // The check's A query goes through c-ares' A parser too; another type is read by its asker.
        let callback: ares_callback =
            question.type == 1
            ? { context, status, _, answer, length in
                // c-ares hands a NOERROR answer over unparsed: a cut-off record is still "success".
                let wellFormed =
                    status != ARES_SUCCESS ? status : reachd_ares_parse_a_reply(answer, length, nil, nil, nil)
                NameserverQueries.answered(
                    context, status: wellFormed == ARES_ENODATA ? ARES_SUCCESS : wellFormed,
                    socketStatus: status, answer, length)
            }
            : { context, status, _, answer, length in
                NameserverQueries.answered(context, status: status, socketStatus: status, answer, length)
            }
        channel.query(question.name, type: question.type, context: context, callback: callback)
    }

    /// Ends the query c-ares called back for.
    ///
    /// - Parameters:
    ///   - status: what the answer came to (after the A parser's check).
    ///   - socketStatus: c-ares' own status: `ARES_ECONNREFUSED` when a socket call failed.
    private static func answered(
        _ context: UnsafeMutableRawPointer?, status: Int32, socketStatus: Int32, _ answer: UnsafeMutablePointer<UInt8>?,
        _ length: Int32
    ) {
        let call = Unmanaged<PendingQuery<NameserverAnswer>.Call>.fromOpaque(context!).takeRetainedValue()
        call.channel.outstanding -= 1
        // A C callback captures nothing: the server comes with the query (its timeout answer).
        var result = call.query.timedOut
        (result.failure, result.detail, result.wasCancelled) = judge(status: status)
        if let answer, length > 0 { result.message = Array(UnsafeBufferPointer(start: answer, count: Int(length))) }
        if socketStatus == ARES_ECONNREFUSED { result.socketError = call.channel.lastSocketError }
        call.query.finish(result)
    }

    /// A channel asks one server on one port out of one way, hearing routers' errors or not.
    private struct ChannelKey: Hashable {
        var server: IPAddress
        var port: UInt16?
        var way: ResolverWay
        var hearsRouterErrors: Bool
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

// MARK: - As a driver of the engine loop: its channels.

extension NameserverQueries {
    func processTimeouts(now: ContinuousClock.Instant) { channels.processTimeouts(now: now) }

    func nextWakeUp(now: ContinuousClock.Instant) -> ContinuousClock.Instant? { channels.nextWakeUp(now: now) }

    func shutdown() { channels.shutdown() }
}
