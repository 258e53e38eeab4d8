import FoundationEssentials
import Reachable
import Synchronization

/// Keeps every target's part of the status document true: probes each target — each address
/// family on its own, concurrently — at once on every batch of netlink notifications and
/// resolv.conf change, and every `--target-interval` otherwise. Results go to the monitor without
/// awaiting; the monitor publishes only real changes, so steady probing makes no events.
///
/// When a batch takes the route to a target family's last known addresses, the route gate marks
/// it `no-route` in the very document that publishes the batch (see `RouteGate`).
final class TargetProber: Sendable {
    /// The targets' books. Taken briefly by the engine thread (recording a result) and by the
    /// netlink thread (the route gate), always inside the monitor's update, never across I/O.
    private let books: SharedBook<[TargetBook]>
    private let scheduler: ProbeScheduler<ProbePipeline.Result>
    let monitor: NetworkMonitor

    /// - Parameters:
    ///   - monitor: its document already lists the targets as `unknown`
    ///     (`ProbeConfiguration.initialTargets`), so their `since` is kept.
    ///   - events: told every finished probe (for metrics: durations are not in the document).
    init(
        configuration: ProbeConfiguration, engine: ProbeEngine, routes: RouteChecker, monitor: NetworkMonitor,
        events: ProbeEvents
    ) {
        let listed = monitor.current.targets
        let books = SharedBook(
            configuration.targets.map { spec in
                TargetBook(spec: spec, since: listed.first { $0.name == spec.name }?.since ?? Date())
            })
        self.books = books
        self.monitor = monitor
        let evaluator = ThresholdEvaluator(
            failureThreshold: configuration.targetFailures, successThreshold: configuration.targetSuccesses)
        let pipeline = ProbePipeline(engine: engine, routes: routes)
        let (interval, timeout) = (configuration.targetInterval, configuration.targetTimeout)
        scheduler = ProbeScheduler(
            engine: engine, monitor: monitor, items: configuration.targets.count, timerSource: .targets,
            run: { item, report, completion in
                let (url, previous) = books.withLock { ($0[item].spec.url, $0[item].addresses) }
                pipeline.run(url, timeout: timeout, previousAddresses: previous, report: report, completion: completion)
            },
            record: { item, result, epoch, _ in
                let name = books.withLock { $0[item].spec.name }
                for probed in result.families {
                    events.targetProbed(name, result.duration, probed.outcome.failure)
                }
                if let failure = result.unresolved { events.targetProbed(name, result.duration, failure) }
                var failedLookups = 0
                let applied = monitor.update(ifEpoch: epoch) { document in
                    let status = books.withLock { books in
                        failedLookups = books[item].record(result, evaluator: evaluator, at: Date())
                        return books[item].status
                    }
                    document.replaceTarget(status)
                }
                // A family judged failed for its lookup alone is a failed probe (reason dns) too.
                for _ in 0..<failedLookups { events.targetProbed(name, result.duration, .dns) }
                let delay = books.withLock { $0[item].nextDelay(evaluator: evaluator, interval: interval) }
                return applied ? delay : nil
            })
        monitor.addRouteGate(
            RouteGate(
                addresses: { books.withLock { $0.flatMap(\.addresses) } },
                apply: { document, unroutable, now in
                    guard !unroutable.isEmpty else { return }
                    let statuses = books.withLock { books in
                        for index in books.indices {
                            books[index].routesGone(unroutable, evaluator: evaluator, at: now)
                        }
                        return books.map(\.status)
                    }
                    for status in statuses { document.replaceTarget(status) }
                }))
    }

    /// Probes every target now, then on every network change and interval.
    func start() {
        scheduler.start()
    }

    /// Re-runs every target at once (resolv.conf changed: names may resolve elsewhere now).
    func resolverChanged() {
        scheduler.runAll()
    }

    /// Replaces the target set in place (a targets file was read again), in one document: a
    /// target whose name and URL text are unchanged keeps its book (state, `since`, failures
    /// counted so far); a new or changed one starts `unknown`; a removed one leaves. Every target
    /// is then probed at once — the kept ones too: the runs under way were begun for the old
    /// order and are dropped, and one extra probe of a kept target is judged like any other.
    /// On the engine thread.
    ///
    /// - Parameter applied: what else the document says of the applied read (`targetsFile`),
    ///   in the same update; told whether the set changed.
    /// - Returns: what changed, by name.
    func replaceTargets(
        with specs: [TargetSpec], applied: (inout ReachabilityStatus, _ setChanged: Bool) -> Void = { _, _ in }
    ) -> TargetSetChange {
        assert(scheduler.engine.isEngineThread, "the scheduler is confined to the engine thread")
        var change = TargetSetChange()
        if books.withLock({ $0.map(\.spec) }) == specs {
            change.kept = specs.map(\.name)
            monitor.update { applied(&$0, false) }
            return change  // nothing else to do: no run is disturbed
        }
        // Books and document in one update: the route gate (on the netlink thread, inside the
        // monitor's lock) sees either the old set in both or the new set in both.
        monitor.update { document in
            applied(&document, true)
            let now = Date()
            document.targets = books.withLock { books in
                let previous = Dictionary(books.map { ($0.spec.name, $0) }, uniquingKeysWith: { first, _ in first })
                books = specs.map { spec in
                    switch previous[spec.name] {
                    case let kept? where kept.spec.url.text == spec.url.text:
                        change.kept.append(spec.name)
                        return kept
                    case .some:
                        change.changed.append(spec.name)
                    case nil:
                        change.added.append(spec.name)
                    }
                    return TargetBook(spec: spec, since: now)
                }
                let names = Set(specs.map(\.name))
                change.removed = previous.keys.filter { !names.contains($0) }.sorted()
                return books.map(\.status)
            }
        }
        scheduler.resize(to: specs.count)
        scheduler.runAll()
        return change
    }
}

/// What a new target set changed, by name (for the log line of a reload).
public struct TargetSetChange: Sendable, Equatable {
    /// In the new set's order.
    public var added: [String] = []
    /// Sorted.
    public var removed: [String] = []
    /// The URL changed: it starts again as `unknown`.
    public var changed: [String] = []
    /// The same name and URL: state and `since` kept.
    public var kept: [String] = []

    public init() {}
}

extension ReachabilityStatus {
    /// Puts a target's entry in its place (by name; the document keeps configuration order).
    /// An unchanged entry is not written: the document then still shares the monitor's copy of
    /// the list, so a steady probe neither copies every target nor compares them one by one.
    mutating func replaceTarget(_ status: TargetStatus) {
        guard let index = targets.firstIndex(where: { $0.name == status.name }), targets[index] != status else {
            return
        }
        targets[index] = status
    }
}
