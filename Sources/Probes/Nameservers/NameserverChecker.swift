import FoundationEssentials
import Reachable
import Synchronization

/// DNS as its own signal (`--dns-check NAME`): asks **each** nameserver of resolv.conf, alone,
/// for the A record of NAME, on every network change and resolv.conf change (servers added or
/// removed follow at once) and every `--dns-interval`. A server without a usable route is
/// `failing` (`no-route`) at once, with nothing sent — by the route gate when a batch takes it.
final class NameserverChecker: Sendable {
    /// Taken briefly by the engine thread (around the monitor's update: lock order book →
    /// monitor) and by the route gate.
    private let book: SharedBook<NameserverBook>
    private let scheduler: ProbeScheduler<NameserverAnswer>
    private let resolvConfPath: String
    private let monitor: NetworkMonitor

    /// - Parameter startedFailing: told, on the engine thread, when a server whose last answer was
    ///   good fails (`StallRecheck`).
    init(
        name: String, configuration: ProbeConfiguration, engine: ProbeEngine, routes: RouteChecker,
        monitor: NetworkMonitor, events: ProbeEvents, startedFailing: @escaping @Sendable () -> Void = {}
    ) {
        let book = SharedBook(
            NameserverBook(name: name, failures: configuration.dnsFailures, since: monitor.current.dns.since))
        self.book = book
        self.monitor = monitor
        resolvConfPath = configuration.resolver.resolvConfPath
        let (interval, timeout) = (configuration.dnsInterval, configuration.dnsTimeout)
        scheduler = ProbeScheduler(
            engine: engine, monitor: monitor, items: 0, timerSource: .nameservers,
            run: { item, _, completion in
                guard let server = book.withLock({ item < $0.addresses.count ? $0.addresses[item] : nil }) else {
                    return completion(nil)
                }
                switch routes.route(to: server) {
                case .noRoute: completion(NameserverAnswer(server: server, failure: .noRoute))
                case .unknown:
                    completion(
                        NameserverAnswer(server: server, failure: .error, detail: "the route could not be asked"))
                case .routable:
                    let submitted = engine.askNameserver(server, name: name, timeout: timeout) { answer in
                        completion(answer.wasCancelled ? nil : answer)
                    }
                    if !submitted { completion(nil) }
                }
            },
            record: { item, answer, epoch, _ in
                let server = answer.server
                events.nameserverAsked(server.description, answer.duration, answer.failure)
                // Recorded only while the document takes results (`NetworkMonitor.isCurrent`).
                let (delay, starts) = book.withLock { book -> (Duration?, Bool) in
                    guard monitor.isCurrent(epoch) else { return (nil, false) }
                    let starts = book.startsFailing(answer.failure, server: server)
                    book.record(answer.failure, server: server, at: Date())
                    let status = book.status
                    guard monitor.update(ifEpoch: epoch, deferred: true, { $0.dns = status }) else {
                        return (nil, false)
                    }
                    return (book.nextDelay(for: server, interval: interval), starts)
                }
                // Outside the book's lock: the checks take their own.
                if starts { startedFailing() }
                return delay
            })
        monitor.addRouteGate(
            RouteGate(
                questions: { book.withLock { $0.addresses.map { RouteQuestion($0) } } },
                judge: { unroutable, _, now in
                    book.withLock { book -> RouteGate.Edit? in
                        guard !unroutable.isEmpty else { return nil }
                        book.routesGone(unroutable.addresses(via: .kernelChoice), at: now)
                        let status = book.status
                        return { $0.dns = status }
                    }
                }))
    }

    /// Reads resolv.conf and asks every server now, then on every network change and interval.
    func start() {
        scheduler.engine.perform { [self] in
            readServers()
            scheduler.start()
        }
    }

    /// resolv.conf changed: servers added or removed show at once, and every server is asked again.
    func resolverChanged() {
        scheduler.engine.perform { [self] in
            readServers()
            scheduler.runAll()
        }
    }

    /// On the engine thread.
    private func readServers() {
        let servers = ResolvConf.nameservers(atPath: resolvConfPath)
        let count = servers.count
        book.withLock { book in
            book.setServers(servers, at: Date())
            let status = book.status
            monitor.update { $0.dns = status }
        }
        scheduler.resize(to: count)
    }
}
