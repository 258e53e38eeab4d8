import CProbeLibraries
import Glibc
import Reachable

/// Name resolution over c-ares: A or AAAA for a host (or both in one lookup), with a deadline per
/// query and the errors DNS actually gave (NXDOMAIN is `dns`, silence is `timeout`).
///
/// Driven by the probe engine's thread only: `start` queues a query, the engine polls the descriptors
/// from `appendWaitDescriptors` together with libcurl's and calls `process`/`processTimeouts`.
/// Completions run there too.
///
/// The engine watches `resolv.conf` once (one inotify watch, `EngineCore`) and calls `prepare`
/// before each batch of resolutions; when the file changed, a new channel reads it and the old
/// one is retired: it finishes the queries it has, then is destroyed, so a change never fails a
/// resolution already under way.
final class Resolver {
    private let configuration: ResolverConfiguration
    private var current: AresChannel?
    private var retired: [AresChannel] = []
    /// Why the last attempt to read the configuration failed, while there is no channel.
    private var configurationProblem: String?
    /// Queries not yet completed, for their deadlines.
    private var pending = PendingQueries<ResolveOutcome>()

    private let problem: @Sendable (String) -> Void

    init(configuration: ResolverConfiguration, problem: @escaping @Sendable (String) -> Void = { _ in }) {
        self.configuration = configuration
        self.problem = problem
    }

    /// The file the channel reads, for the engine's watch.
    var resolvConfPath: String { configuration.resolvConfPath }

    /// Makes a channel before a batch of resolutions if there is none yet (the first batch, or
    /// every read failed so far), and a new one when `reread`: the file changed.
    func prepare(reread: Bool) {
        guard current == nil || reread else { return }
        do {
            let channel = try AresChannel(configuration: configuration)
            if let old = current { retire(old) }
            current = channel
            configurationProblem = nil
        } catch {
            // Keep the previous channel, if any: an unreadable new file should not stop DNS.
            if configurationProblem != error.description { problem(error.description) }
            configurationProblem = error.description
        }
    }

    /// Starts resolving `host` for `family` (`nil`: both); `completion` is called once, on the
    /// engine thread.
    func start(
        host: String, family: AddressFamily?, deadline: ContinuousClock.Instant,
        completion: @escaping @Sendable (ResolveOutcome) -> Void
    ) {
        let resolution = PendingQuery(
            deadline: deadline,
            timedOut: ResolveOutcome(addresses: [], failure: .timeout, detail: "no answer before the deadline"),
            cancelled: ResolveOutcome(addresses: [], failure: .error, detail: "the engine stopped", wasCancelled: true),
            completion: completion)
        if let literal = IPAddress(host) {
            let matches = family == nil || family == literal.addressFamily
            resolution.finish(ResolveOutcome(addresses: matches ? [literal] : [], failure: nil))
            return
        }
        if deadline <= .now {
            resolution.finish(ResolveOutcome(addresses: [], failure: .timeout, detail: "no time left to resolve"))
            return
        }
        guard let channel = current else {
            resolution.finish(
                ResolveOutcome(addresses: [], failure: .error, detail: configurationProblem ?? "no resolver"))
            return
        }
        pending.append(resolution)
        let context = Unmanaged.passRetained(PendingQuery.Call(query: resolution, channel: channel)).toOpaque()
        let callback: ares_addrinfo_callback =
            family == nil
            ? { context, status, _, result in
                Resolver.finish(context, Resolver.outcome(status: status, result: result), status, result)
            }
            : { context, status, _, result in
                Resolver.finish(context, Resolver.familyOutcome(status: status, result: result), status, result)
            }
        channel.getAddresses(of: host, family: family, context: context, callback: callback)
    }

    /// Ends a query from c-ares' callback (a C function pointer: it captures nothing).
    /// A failure's words name the status and the nameservers asked (`SERVFAIL from 198.18.0.1`).
    private static func finish(
        _ context: UnsafeMutableRawPointer?, _ outcome: ResolveOutcome, _ status: Int32,
        _ result: UnsafeMutablePointer<ares_addrinfo>?
    ) {
        let call = Unmanaged<PendingQuery<ResolveOutcome>.Call>.fromOpaque(context!).takeRetainedValue()
        if let result { reachd_ares_freeaddrinfo(result) }
        var outcome = outcome
        if status != ARES_SUCCESS, !outcome.wasCancelled {
            outcome.detail = FailureDetail.dns(status: status, servers: call.channel.servers)
        }
        call.channel.outstanding -= 1
        call.query.finish(outcome)
    }

    /// Every descriptor of every channel (current and retired).
    func appendWaitDescriptors(to descriptors: inout [curl_waitfd]) {
        current?.appendWaitDescriptors(to: &descriptors)
        for channel in retired { channel.appendWaitDescriptors(to: &descriptors) }
    }

    /// Hands ready descriptors to the channel that owns them.
    func process(_ descriptors: [curl_waitfd]) {
        for descriptor in descriptors where descriptor.revents != 0 {
            current?.process(descriptor)
            for channel in retired { channel.process(descriptor) }
        }
    }

    /// c-ares' own timeouts, then reachd's deadlines; then drops what finished.
    func processTimeouts(now: ContinuousClock.Instant) {
        current?.processTimeouts()
        for channel in retired { channel.processTimeouts() }
        pending.expire(now: now)
        retired.removeAll { channel in
            guard channel.outstanding == 0 else { return false }
            channel.destroy()
            return true
        }
    }

    /// The earliest moment something must be processed even if no descriptor becomes ready.
    func nextWakeUp(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        pending.nextWakeUp(now: now, channels: [current].compactMap { $0 } + retired)
    }

    /// Ends every query (their completions run, marked cancelled) and destroys every channel.
    func shutdown() {
        current?.destroy()
        current = nil
        for channel in retired { channel.destroy() }
        retired = []
        pending.cancelAll()
    }

    private func retire(_ channel: AresChannel) {
        if channel.outstanding == 0 {
            channel.destroy()
        } else {
            retired.append(channel)
        }
    }

    /// Maps c-ares' answer to one family's query to an outcome: an answer that the name has no
    /// address of the family (NXDOMAIN, NODATA) is no failure — the family simply has none (RFC
    /// 8305: the other family may still resolve) — only a query that got no usable answer is.
    static func familyOutcome(status: Int32, result: UnsafeMutablePointer<ares_addrinfo>?) -> ResolveOutcome {
        switch status {
        case ARES_SUCCESS:
            return ResolveOutcome(addresses: addresses(in: result), failure: nil)
        case ARES_ENOTFOUND, ARES_ENODATA, ARES_ENONAME:
            return ResolveOutcome(addresses: [], failure: nil, detail: String(cString: reachd_ares_strerror(status)))
        default:
            return outcome(status: status, result: result)
        }
    }

    /// Maps c-ares' answer to an outcome: the address list, or the reason it has none.
    static func outcome(status: Int32, result: UnsafeMutablePointer<ares_addrinfo>?) -> ResolveOutcome {
        let detail = String(cString: reachd_ares_strerror(status))
        switch status {
        case ARES_SUCCESS:
            let addresses = addresses(in: result)
            if addresses.isEmpty { return ResolveOutcome(addresses: [], failure: .dns, detail: "no addresses") }
            return ResolveOutcome(addresses: addresses, failure: nil)
        case ARES_ENOTFOUND, ARES_ENODATA, ARES_ENONAME, ARES_EBADNAME, ARES_ESERVFAIL, ARES_EREFUSED,
            ARES_EFORMERR, ARES_ENOTIMP, ARES_EBADRESP, ARES_ECONNREFUSED:
            // The name did not resolve: no such name, no address for it, or a server that failed or
            // refused the query (including one whose port answered with ICMP "port unreachable").
            return ResolveOutcome(addresses: [], failure: .dns, detail: detail)
        case ARES_ETIMEOUT:
            return ResolveOutcome(addresses: [], failure: .timeout, detail: detail)
        case ARES_EDESTRUCTION, ARES_ECANCELLED:
            return ResolveOutcome(addresses: [], failure: .error, detail: detail, wasCancelled: true)
        default:
            return ResolveOutcome(addresses: [], failure: .error, detail: detail)
        }
    }

    /// The addresses of c-ares' answer, de-duplicated and sorted.
    private static func addresses(in result: UnsafeMutablePointer<ares_addrinfo>?) -> [IPAddress] {
        var addresses = Set<IPAddress>()
        var node = result?.pointee.nodes
        while let current = node {
            if let address = IPAddress(socketAddress: UnsafePointer(current.pointee.ai_addr)) {
                addresses.insert(address)
            }
            node = current.pointee.ai_next
        }
        return addresses.sorted()
    }
}
