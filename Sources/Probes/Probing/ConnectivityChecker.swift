import FoundationEssentials
import Reachable
import Synchronization

/// Keeps the document's `connectivity` true, as NetworkManager does, for each address family of
/// the check URL's host: checks at once on every network change and resolv.conf change, every
/// `--connectivity-interval` while every family is `full`, and sooner while one is not (1 s,
/// doubling up to the interval), and at once when a probe elsewhere starts failing while it reads
/// `full` (`StallRecheck`). `none` is decided by the route gate, before DNS is asked.
final class ConnectivityChecker: Sendable {
    /// Taken briefly by the engine thread and the route gate, each holding it around the
    /// monitor's update (lock order book → monitor, see `RouteGate`).
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
                // The book changes only if the document takes it: both under the book's lock.
                book.withLock { book in
                    var next = book
                    var delay: Duration?
                    let applied = monitor.update(ifEpoch: epoch, deferred: true) { document in
                        let unreachable = document.path.state == .unreachable
                        delay = next.record(result, pathUnreachable: unreachable, isLast: isLast, at: Date())
                        document.connectivity = next.status
                    }
                    if applied { book = next }
                    return delay
                }
            })
        monitor.addRouteGate(
            RouteGate(
                questions: { book.withLock { $0.addresses.map { RouteQuestion($0, via: egress) } } },
                judge: { unroutable, path, now, publish in
                    book.withLock { book in
                        let gone = unroutable.addresses(via: egress)
                        book.routesGone(gone, pathUnreachable: path.state == .unreachable, at: now)
                        let status = book.status
                        publish { $0.connectivity = status }
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
