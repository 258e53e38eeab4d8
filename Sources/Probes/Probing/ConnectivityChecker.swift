import FoundationEssentials
import Reachable
import Synchronization

/// Keeps the document's `connectivity` true, as NetworkManager does, for each address family of
/// the check URL's host: checks at once on every network change and resolv.conf change, every
/// `--connectivity-interval` while every family is `full`, and sooner while one is not (1 s,
/// doubling up to the interval), and at once when a probe elsewhere starts failing while it reads
/// `full` (`StallRecheck`). `none` is decided by the route gate, before DNS is asked.
final class ConnectivityChecker: Sendable {
    /// Taken briefly by the engine thread (around the monitor's update: lock order book →
    /// monitor) and by the route gate.
    private let book: SharedBook<ConnectivityBook>
    private let scheduler: ProbeScheduler<ProbePipeline.Result>

    /// - Parameters:
    ///   - monitor: its document already shows the check as `unknown`
    ///     (`ProbeConfiguration.initialConnectivity`), so its `since` is kept.
    ///   - egress: the check's way out.
    init(
        spec: ConnectivitySpec, configuration: ProbeConfiguration, engine: ProbeEngine, routes: RouteChecker,
        monitor: NetworkMonitor, egress: Egress = .kernelChoice
    ) {
        let proxy = configuration.proxies.proxy(for: spec.url, via: egress)
        let book = SharedBook(
            ConnectivityBook(
                spec: spec, interval: configuration.connectivityInterval,
                since: monitor.current.connectivity.since, proxy: proxy))
        self.book = book
        let pipeline = ProbePipeline(engine: engine, routes: routes)
        let timeout = configuration.connectivityTimeout
        scheduler = ProbeScheduler(
            engine: engine, monitor: monitor, items: 1, timerSource: .connectivity,
            run: { _, report, completion in
                let previous = book.withLock { $0.addresses }
                pipeline.run(
                    spec.url, via: egress, proxy: proxy, timeout: timeout, expectedBody: spec.expectedResponse,
                    previousAddresses: previous,
                    report: report, completion: completion)
            },
            record: { _, result, epoch, isLast in
                // Recorded only while the document takes results (`NetworkMonitor.isCurrent`): its
                // path is then the one the result is judged against.
                book.withLock { book in
                    guard monitor.isCurrent(epoch) else { return nil }
                    let unreachable = monitor.current.path.state == .unreachable
                    let delay = book.record(result, pathUnreachable: unreachable, isLast: isLast, at: Date())
                    let status = book.status
                    let applied = monitor.update(ifEpoch: epoch, deferred: true) { $0.connectivity = status }
                    return applied ? delay : nil
                }
            })
        monitor.addRouteGate(
            RouteGate(
                questions: { book.withLock { $0.addresses.map { RouteQuestion($0, via: egress) } } },
                judge: { unroutable, path, now in
                    book.withLock { book -> RouteGate.Edit? in
                        let gone = unroutable.addresses(via: egress)
                        book.routesGone(gone, pathUnreachable: path.state == .unreachable, at: now)
                        let status = book.status
                        return { $0.connectivity = status }
                    }
                }))
    }

    /// Checks now, then on every network change and as the schedule says.
    func start() {
        scheduler.start()
    }

    /// Checks again at once (resolv.conf changed).
    func resolverChanged() {
        scheduler.runAll()
    }

    /// A target family or a nameserver started failing: checks at once while the check reads
    /// `full`, at most once per 10 s (`StallRecheck`).
    func recheckForStall() {
        guard book.withLock({ $0.recheckForStall(at: .now) }) else { return }
        scheduler.runSoon(0)
    }
}
