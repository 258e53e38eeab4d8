import FoundationEssentials
public import Reachable
import Synchronization

/// Keeps every target's part of the status document true: probes each one at once on every
/// batch of netlink notifications and resolv.conf change, and every `--target-interval`
/// otherwise; all concurrently, each with its own deadline. Results go to the monitor without
/// awaiting; the monitor publishes only real changes, so steady probing makes no events.
///
/// Everything here runs on the probe engine's thread (`engine.perform`, timers, completions);
/// the mutex only makes that safe to state, it is never contended.
public final class TargetProber: Sendable {
    private struct Slot {
        let spec: TargetSpec
        var evaluation: TargetEvaluation
        /// Last resolved (kept while a failure is still tolerated): what the route pre-check asks about.
        var addresses: [IPAddress]
        var interface: String?
        /// Bumped for every new run: a result of an older run is dropped.
        var generation = 0
        /// Runs under way: a change starts a fresh run at once (the one under way is stale), but
        /// never more than `maximumRuns`, so a storm of network changes cannot pile up transfers;
        /// past that, a run is asked for the moment one ends.
        var inFlight = 0
        var rerun = false
        var lastProbeDuration: Duration?
    }

    /// A stale run still finishing, and the fresh one.
    static let maximumRuns = 2

    private let slots: Mutex<[Slot]>
    private let pipeline: ProbePipeline
    private let monitor: NetworkMonitor
    private let evaluator: TargetEvaluator
    private let interval: Duration
    private let timeout: Duration
    private let onProbe: (@Sendable (_ target: String, _ duration: Duration) -> Void)?

    /// - Parameters:
    ///   - monitor: its document already lists the targets as `unknown`
    ///     (`ProbeConfiguration.initialTargets`), so their `since` is kept.
    ///   - onProbe: called on the engine thread with every finished probe's duration (for
    ///     metrics: durations are not in the document); it must return at once.
    public init(
        configuration: ProbeConfiguration, engine: ProbeEngine, routes: RouteChecker, monitor: NetworkMonitor,
        onProbe: (@Sendable (_ target: String, _ duration: Duration) -> Void)? = nil
    ) {
        let listed = monitor.current.targets
        slots = Mutex(
            configuration.targets.enumerated().map { index, spec in
                Slot(
                    spec: spec,
                    evaluation: .unknown(since: index < listed.count ? listed[index].since : Date()),
                    addresses: spec.url.literal.map { [$0] } ?? [])
            })
        pipeline = ProbePipeline(engine: engine, routes: routes)
        self.monitor = monitor
        evaluator = TargetEvaluator(failureThreshold: configuration.targetFailures)
        interval = configuration.targetInterval
        timeout = configuration.targetTimeout
        self.onProbe = onProbe
    }

    /// Probes every target now, then on every network change and interval.
    public func start() {
        monitor.observeNetworkChanges { [weak self] _ in
            guard let self else { return }
            pipeline.engine.perform { [weak self] in self?.networkChanged() }
        }
        pipeline.engine.perform { [self] in networkChanged() }
    }

    /// Re-runs every target at once (resolv.conf changed: names may resolve elsewhere now).
    public func resolverChanged() {
        pipeline.engine.perform { [self] in
            for index in slots.withLock({ $0.indices }) { begin(index) }
        }
    }

    /// A route may have gone: decide `no-route` at once from the addresses last resolved (DNS
    /// itself may need the route that just went away), then probe every target again.
    private func networkChanged() {
        let unroutable = slots.withLock { $0.map { pipeline.noneRoutable($0.addresses) } }
        let now = Date()
        slots.withLock { slots in
            for index in slots.indices where unroutable[index] {
                slots[index].evaluation = evaluator.next(after: slots[index].evaluation, failure: .noRoute, at: now)
                slots[index].interface = nil
            }
        }
        if unroutable.contains(true) { publish() }
        for index in unroutable.indices { begin(index) }
    }

    /// Starts a new run of one target; one under way becomes stale (its result is dropped). With
    /// `maximumRuns` under way already, the new run starts the moment one of them ends.
    private func begin(_ index: Int) {
        let run = slots.withLock { slots -> (Int, TargetSpec, [IPAddress])? in
            slots[index].generation += 1
            guard slots[index].inFlight < Self.maximumRuns else {
                slots[index].rerun = true
                return nil
            }
            slots[index].inFlight += 1
            return (slots[index].generation, slots[index].spec, slots[index].addresses)
        }
        guard let (generation, spec, previous) = run else { return }
        let started = ContinuousClock.now
        pipeline.run(spec.url, timeout: timeout, previousAddresses: previous) { [self] result in
            finish(index, generation, result, duration: .now - started)
        }
    }

    private func finish(_ index: Int, _ generation: Int, _ result: ProbePipeline.Result, duration: Duration) {
        guard !result.wasCancelled else { return }
        let (current, rerun) = slots.withLock { slots -> (Bool, Bool) in
            slots[index].inFlight -= 1
            guard slots[index].generation == generation else {
                defer { slots[index].rerun = false }
                return (false, slots[index].rerun)
            }
            let next = evaluator.next(after: slots[index].evaluation, failure: result.failure, at: Date())
            // While a failure is still tolerated the target stays as it was seen last (no flapping
            // addresses or interface); otherwise the document shows this run.
            let tolerated = next.state == .reachable && result.failure != nil
            slots[index].evaluation = next
            slots[index].lastProbeDuration = duration
            if !tolerated {
                slots[index].addresses = result.addresses
                slots[index].interface = result.interface
            }
            return (true, false)
        }
        if rerun { return begin(index) }
        guard current else { return }
        onProbe?(slots.withLock { $0[index].spec.name }, duration)
        publish()
        pipeline.engine.schedule(key: index, at: .now + interval) { [self] in begin(index) }
    }

    private func publish() {
        let statuses = slots.withLock { $0.map(Self.status) }
        monitor.update { $0.targets = statuses }
    }

    private static func status(_ slot: Slot) -> TargetStatus {
        TargetStatus(
            name: slot.spec.name, url: slot.spec.url.text, state: slot.evaluation.state,
            reason: slot.evaluation.reason,
            addresses: slot.evaluation.state == .unknown ? [] : slot.addresses.map(\.description),
            interface: slot.interface,
            since: slot.evaluation.since)
    }
}
