import FoundationEssentials
import Reachable

/// `--per-uplink`: the connectivity check once more through every uplink on its own, pinned to
/// it (DNS, route question and HTTP request), published beside the interface in
/// `interfaces[].connectivity` — Android's validation of every network, NetworkManager's check
/// per device. Each uplink is scheduled like the top-level check (`ConnectivityBook`: at once on
/// every change, the interval while `full`, backing off from 1 s otherwise).
///
/// Which interfaces are uplinks is the netlink source's reading (`RoutingSnapshot.uplinks`, asked
/// on every batch): the route gate follows it in the very document that publishes the batch, so
/// an uplink that goes away is `null` there, and one that appears is `unknown` there and checked
/// at once (the batch's fresh run).
final class UplinkChecker: Sendable {
    /// Taken briefly by the engine thread (around the monitor's update: lock order book →
    /// monitor) and by the route gate.
    private let books: SharedBook<UplinkBooks>
    private let scheduler: ProbeScheduler<ProbePipeline.Result>

    init(
        spec: ConnectivitySpec, configuration: ProbeConfiguration, engine: ProbeEngine, routes: RouteChecker,
        monitor: NetworkMonitor
    ) {
        var initial = UplinkBooks(spec: spec, interval: configuration.connectivityInterval)
        _ = initial.follow(monitor.routingSnapshot.uplinks, unroutable: [], at: Date())
        let books = SharedBook(initial)
        self.books = books
        let pipeline = ProbePipeline(engine: engine, routes: routes)
        let timeout = configuration.connectivityTimeout
        let scheduler = ProbeScheduler<ProbePipeline.Result>(
            engine: engine, monitor: monitor, items: initial.uplinks.count, timerSource: .uplinks,
            run: { item, report, completion in
                guard let uplink = books.withLock({ $0[item] }) else { return completion(nil) }
                pipeline.run(
                    spec.url, via: uplink.egress, timeout: timeout, expectedBody: spec.expectedResponse,
                    previousAddresses: uplink.book.addresses, report: report, completion: completion)
            },
            record: { item, result, epoch, isLast in
                // Recorded only while the document takes results (`NetworkMonitor.isCurrent`).
                books.withLock { books in
                    guard monitor.isCurrent(epoch), var uplink = books[item] else { return nil }
                    let delay = uplink.book.record(result, pathUnreachable: false, isLast: isLast, at: Date())
                    books[item] = uplink
                    let (status, interface) = (uplink.book.status, uplink.interface)
                    let applied = monitor.update(ifEpoch: epoch, deferred: true) {
                        $0.setUplinkConnectivity(status, of: interface)
                    }
                    return applied ? delay : nil
                }
            })
        self.scheduler = scheduler
        monitor.update { $0.setUplinkConnectivity(initial.statuses) }
        monitor.addRouteGate(
            RouteGate(
                questions: {
                    books.withLock { books in
                        books.uplinks.flatMap { uplink in
                            uplink.book.addresses.map { RouteQuestion($0, via: uplink.egress) }
                        }
                    }
                },
                judge: { verdicts, _, now in
                    // The batch's reading: the monitor keeps it before the gates judge.
                    let current = monitor.routingSnapshot.uplinks
                    return books.withLock { books -> RouteGate.Edit? in
                        if books.follow(current, unroutable: verdicts.unroutableQuestions, at: now) {
                            // Queued before the batch's fresh run (`ProbeScheduler.start`'s observer).
                            let count = books.uplinks.count
                            _ = engine.perform { scheduler.resize(to: count) }
                        }
                        let statuses = books.statuses
                        return { $0.setUplinkConnectivity(statuses) }
                    }
                }))
    }

    /// Checks every uplink now, then on every network change and as each one's schedule says.
    func start() {
        scheduler.start()
    }

    /// Checks again at once (resolv.conf changed).
    func resolverChanged() {
        scheduler.runAll()
    }

    /// A target family that went out of `interface` started failing: checks that uplink at once
    /// while it reads `full`, at most once per 10 s (`StallRecheck`).
    func recheckForStall(of interface: String) {
        guard let item = books.withLock({ $0.recheckForStall(of: interface, at: .now) }) else { return }
        scheduler.runSoon(item)
    }
}
