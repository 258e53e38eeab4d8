import FoundationEssentials
import Reachable
import Synchronization

/// Keeps the document's `connectivity` true, as NetworkManager does, for each address family of
/// the check URL's host: checks at once on every network change and resolv.conf change, every
/// `--connectivity-interval` while every family is `full`, and sooner while one is not (1 s,
/// doubling up to the interval). `none` is decided by the route gate, before DNS is asked.
final class ConnectivityChecker: Sendable {
    /// Taken briefly by the engine thread and the route gate, inside the monitor's update only.
    private let book: SharedBook<ConnectivityBook>
    private let scheduler: ProbeScheduler<ProbePipeline.Result>

    /// - Parameters:
    ///   - monitor: its document already shows the check as `unknown`
    ///     (`ProbeConfiguration.initialConnectivity`), so its `since` is kept.
    init(
        spec: ConnectivitySpec, configuration: ProbeConfiguration, engine: ProbeEngine, routes: RouteChecker,
        monitor: NetworkMonitor
    ) {
        let book = SharedBook(
            ConnectivityBook(
                spec: spec, interval: configuration.connectivityInterval,
                since: monitor.current.connectivity.since))
        self.book = book
        let pipeline = ProbePipeline(engine: engine, routes: routes)
        let timeout = configuration.connectivityTimeout
        scheduler = ProbeScheduler(
            engine: engine, monitor: monitor, items: 1, timerSource: .connectivity,
            run: { _, report, completion in
                let previous = book.withLock { $0.addresses }
                pipeline.run(
                    spec.url, timeout: timeout, expectedBody: spec.expectedResponse, previousAddresses: previous,
                    report: report, completion: completion)
            },
            record: { _, result, epoch, isLast in
                var delay: Duration?
                monitor.update(ifEpoch: epoch) { document in
                    let unreachable = document.path.state == .unreachable
                    document.connectivity = book.withLock { book in
                        delay = book.record(result, pathUnreachable: unreachable, isLast: isLast, at: Date())
                        return book.status
                    }
                }
                return delay
            })
        monitor.addRouteGate(
            RouteGate(
                addresses: { book.withLock { $0.addresses } },
                apply: { document, unroutable, now in
                    let unreachable = document.path.state == .unreachable
                    document.connectivity = book.withLock { book in
                        book.routesGone(unroutable, pathUnreachable: unreachable, at: now)
                        return book.status
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
}
