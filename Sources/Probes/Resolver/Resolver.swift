import CProbeLibraries
import Glibc
import Reachable

/// Name resolution over c-ares: A or AAAA for a host (or both in one lookup), with a deadline per
/// query and the errors DNS actually gave (NXDOMAIN is `dns`, silence is `timeout`).
///
/// One channel per way out (`ResolverWay`, keys of `AresChannels`): the kernel's choice, or an
/// interface a probe is pinned to, whose queries leave through it (`ares_set_local_dev`) from its
/// source addresses. A channel is made on first use and dropped when idle. Driven by the probe engine's thread only; completions run there.
///
/// It watches `resolv.conf` itself (one inotify watch) and compares it before the first resolution
/// of each turn of the engine loop; when the file changed, a new channel reads it and the old ones
/// are retired: they finish the queries they have, then are destroyed, so a change never fails a
/// resolution already under way. Then its listeners run: the probes resolve again.
final class Resolver: EngineDriver, DescriptorOwner {
    private let configuration: ResolverConfiguration
    /// Long enough that a target probed every few minutes keeps its channel.
    private let channels: AresChannels
    /// Why the last attempt to read the configuration failed, while there is no channel.
    private var configurationProblem: String?
    private let problem: @Sendable (String) -> Void
    /// The watch of resolv.conf (`nil` when it cannot be watched: then it is read once).
    private let watch: FileWatch?
    /// Whether the file was compared this turn of the loop (reset when the turn's timeouts run).
    private var comparedThisTurn = false
    /// Called after the file changed and was read again (`ProbeEngine.onResolverConfigurationChange`).
    var listeners: [@Sendable () -> Void] = []

    private let loop: EventLoop

    init(settings: EngineSettings) {
        configuration = settings.resolver
        problem = settings.resolverProblem
        loop = settings.loop
        channels = AresChannels(idleLifetime: .seconds(600), loop: settings.loop)
        watch = try? FileWatch(path: settings.resolver.resolvConfPath, completedWritesOnly: true)
        if let watch { loop.watch(watch.pollDescriptor, reading: true, writing: false, for: self) }
    }

    /// Makes the kernel's-choice channel if there is none yet (the first resolution, or every read
    /// failed so far), and new channels when the file changed; then tells the listeners.
    private func follow(changed: Bool) {
        if !channels.has(ResolverWay()) || changed {
            do {
                let channel = try makeChannel(ResolverWay())
                channels.replaceAll(with: channel, for: ResolverWay())
                configurationProblem = nil
            } catch {
                // Keep the previous channels, if any: an unreadable new file should not stop DNS.
                say(error)
            }
        }
        if changed { for listener in listeners { listener() } }
    }

    private func makeChannel(_ way: ResolverWay) throws(ResolverError) -> AresChannel {
        try AresChannel(configuration: configuration, way: way)
    }

    private func say(_ error: ResolverError) {
        if configurationProblem != error.description { problem(error.description) }
        configurationProblem = error.description
    }

    /// Starts resolving `host` for `family` (`nil`: both) out of `way`; `completion` is called
    /// once, on the engine thread.
    func start(
        host: String, family: AddressFamily?, way: ResolverWay, deadline: ContinuousClock.Instant,
        completion: @escaping @Sendable (ResolveOutcome) -> Void
    ) {
        // A resolution submitted right after a change already uses the new file.
        if !comparedThisTurn {
            comparedThisTurn = true
            follow(changed: watch?.drain() ?? false)
        }
        let resolution = PendingQuery(
            deadline: deadline,
            timedOut: ResolveOutcome(addresses: [], failure: .timeout, detail: "no answer before the deadline"),
            cancelled: .engineStopped,
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
        let channel: AresChannel
        do {
            channel = try channels.channel(for: way) { () throws(ResolverError) in try makeChannel(way) }
        } catch {
            say(error)
            resolution.finish(ResolveOutcome(addresses: [], failure: .error, detail: error.description))
            return
        }
        channels.track(resolution)
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
            if outcome.failure != nil { outcome.nameservers = call.channel.servers }
            outcome.detail = FailureDetail.dns(status: status, servers: call.channel.servers.map(\.description))
        }
        call.channel.outstanding -= 1
        call.query.finish(outcome)
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

// MARK: - As a driver of the engine loop: its channels, and the watch of resolv.conf.

extension Resolver {
    func processTimeouts(now: ContinuousClock.Instant) {
        comparedThisTurn = false
        channels.processTimeouts(now: now)
    }

    func nextWakeUp(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        channels.nextWakeUp(now: now)
    }

    /// The watch of resolv.conf is ready (the channels' sockets are their own owner's).
    func ready(_ descriptor: Int32, readable: Bool, writable: Bool) {
        if let watch, watch.drain() { follow(changed: true) }
    }

    /// The listeners hold the probing sources, which hold the engine: let both go.
    func shutdown() {
        channels.shutdown()
        if let watch { loop.unwatch(watch.pollDescriptor, for: self) }
        listeners = []
    }
}
