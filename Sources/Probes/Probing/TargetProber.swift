import FoundationEssentials
import Reachable
import Synchronization

/// Keeps every target's part of the status document true: probes each target — each address
/// family on its own, concurrently — at once on every batch of netlink notifications and
/// resolv.conf change, and every `--target-interval` otherwise. Results go to the monitor without
/// awaiting; the monitor publishes only real changes, so steady probing makes no events.
///
/// When a batch takes the route to a target family's last known addresses, the route gate marks
/// it `no-route` in the very document that publishes the batch (see `RouteGate`); a target whose
/// every address it took is not probed again for that batch (`ProbeScheduler.AnsweredByChange`).
final class TargetProber: Sendable {
    /// The targets' books. Taken briefly by the engine thread (recording a result, around the
    /// monitor's update: lock order book → monitor) and by the netlink thread (the route gate),
    /// never across I/O.
    private let books: SharedBook<[TargetBook]>
    private let scheduler: ProbeScheduler<ProbePipeline.Result>
    let monitor: NetworkMonitor
    /// Which proxy each target's book is given, a reloaded one's too.
    private let proxies: ProxyChoice

    /// The target runs under way at once; a round of more waits its turn (`ProbeScheduler`).
    /// Rounds are spread in groups of 100 after the first, so only a round (start, a network
    /// change, a reload) ever reaches it.
    static var maxRunsInFlight: Int { 1000 }

    /// - Parameters:
    ///   - monitor: its document already lists the targets as `unknown`
    ///     (`ProbeConfiguration.initialTargets`), so their `since` is kept.
    ///   - events: told every finished probe (for metrics: durations are not in the document).
    ///   - startedFailing: told, on the engine thread, when a probe starts a family failing (its
    ///     last probe succeeded), with the interfaces those families went out of (`StallRecheck`).
    init(
        configuration: ProbeConfiguration, engine: ProbeEngine, routes: RouteChecker, monitor: NetworkMonitor,
        events: ProbeEvents, startedFailing: @escaping @Sendable (_ uplinks: Set<String>) -> Void = { _ in }
    ) {
        // By name, not searched per target: a search each grows with the square of the targets.
        let listedSince = Dictionary(
            monitor.current.targets.map { ($0.name, $0.since) }, uniquingKeysWith: { first, _ in first })
        let proxies = configuration.proxies
        let books = SharedBook(
            configuration.targets.map { spec in
                TargetBook(
                    spec: spec, since: listedSince[spec.name] ?? Date(),
                    proxy: proxies.proxy(for: spec.url, via: spec.egress))
            })
        self.books = books
        self.proxies = proxies
        self.monitor = monitor
        let evaluator = ThresholdEvaluator(
            failureThreshold: configuration.targetFailures, successThreshold: configuration.targetSuccesses)
        let pipeline = ProbePipeline(engine: engine, routes: routes)
        let (interval, timeout) = (configuration.targetInterval, configuration.targetTimeout)
        let limits = configuration.qualityLimits
        let trim = LargeDocuments.PeriodicTrim(period: interval)
        scheduler = ProbeScheduler(
            engine: engine, monitor: monitor, items: configuration.targets.count, timerSource: .targets,
            spreadInterval: interval, maxRunsInFlight: Self.maxRunsInFlight,
            run: { item, report, completion in
                let (spec, proxy, previous) = books.withLock { ($0[item].spec, $0[item].proxy, $0[item].addresses) }
                pipeline.run(
                    spec.url, via: spec.egress, proxy: proxy, timeout: timeout, previousAddresses: previous,
                    report: report, completion: completion)
            },
            record: { item, result, epoch, _ in
                let name = books.withLock { $0[item].spec.name }
                for probed in result.families {
                    events.targetProbed(name, result.duration, probed.outcome.failure)
                    let quality = probed.outcome.quality
                    if quality.echoesSent > 0 || !quality.roundTrips.isEmpty {
                        events.targetMeasured(name, probed.family, quality)
                    }
                }
                if let failure = result.unresolved { events.targetProbed(name, result.duration, failure) }
                // Recorded in the book only while the document takes results (`isCurrent`), then
                // put in the document; the monitor's lock is held for that edit alone.
                let (applied, failedLookups, delay, failing) = books.withLock {
                    books -> (Bool, Int, Duration?, [(family: AddressFamily, interface: String?)]) in
                    guard monitor.isCurrent(epoch) else { return (false, 0, nil, []) }
                    let failing = books[item].familiesStartingToFail(result)
                    let failedLookups = books[item].record(result, evaluator: evaluator, quality: limits, at: Date())
                    let status = books[item].status
                    let applied = monitor.update(ifEpoch: epoch, deferred: true) { $0.replaceTarget(status, at: item) }
                    return (
                        applied, failedLookups, books[item].nextDelay(evaluator: evaluator, interval: interval), failing
                    )
                }
                // A family judged failed for its lookup alone is a failed probe (reason dns) too.
                if applied { for _ in 0..<failedLookups { events.targetProbed(name, result.duration, .dns) } }
                // Outside the books' lock: the checks take their own.
                if applied, !failing.isEmpty { startedFailing(Set(failing.compactMap(\.interface))) }
                trim.afterProbe()
                return applied ? delay : nil
            },
            answeredByChange: {
                // A run of such a target would take the batch's verdicts (`RouteChecker`) and
                // record `no-route` again, which the route gate has already put in the document.
                // The gate's marks count while no batch came since its document.
                guard monitor.unroutableSinceBatch != nil else { return [] }
                return books.withLock { books in books.indices.map { books[$0].unroutableAtLastJudgement } }
            })
        monitor.addRouteGate(
            RouteGate(
                questions: {
                    books.withLock { $0.routeQuestions }
                },
                judge: { verdicts, _, now in
                    books.withLock { books -> RouteGate.Edit? in
                        guard !verdicts.isEmpty else {
                            // No target lost its route: none is left marked by an older batch.
                            for index in books.indices where books[index].unroutableAtLastJudgement {
                                books[index].unroutableAtLastJudgement = false
                            }
                            return nil
                        }
                        let judged = books.routesGone(verdicts, evaluator: evaluator, at: now)
                        // By place, not by name: one pass over the targets, not a search per
                        // target (docs/scale.md).
                        return { document in document.replaceTargets(judged) }
                    }
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
        // Books and document under the books' lock: the route gate (on the netlink thread, which
        // takes it first) sees either the old set in both or the new set in both.
        books.withLock { books in
            let now = Date()
            let previous = Dictionary(books.map { ($0.spec.name, $0) }, uniquingKeysWith: { first, _ in first })
            books = specs.map { spec in
                switch previous[spec.name] {
                case let kept? where kept.spec.url.text == spec.url.text && kept.spec.egress == spec.egress:
                    change.kept.append(spec.name)
                    return kept
                case .some:
                    change.changed.append(spec.name)
                case nil:
                    change.added.append(spec.name)
                }
                return TargetBook(spec: spec, since: now, proxy: proxies.proxy(for: spec.url, via: spec.egress))
            }
            let names = Set(specs.map(\.name))
            change.removed = previous.keys.filter { !names.contains($0) }.sorted()
            let statuses = books.map(\.status)
            monitor.update { document in
                applied(&document, true)
                document.targets = statuses
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
    /// Puts a target's entry in its place (by name; the document keeps configuration order, so
    /// `hint`, the target's place in it, is checked first: a large fleet is not searched per
    /// probe). An unchanged entry is not written: the document then still shares the monitor's
    /// copy of the list, so a steady probe neither copies every target nor compares them one by one.
    mutating func replaceTarget(_ status: TargetStatus, at hint: Int? = nil) {
        let index =
            hint.flatMap { targets.indices.contains($0) && targets[$0].name == status.name ? $0 : nil }
            ?? targets.firstIndex { $0.name == status.name }
        guard let index, targets[index] != status else { return }
        targets[index] = status
    }
}
