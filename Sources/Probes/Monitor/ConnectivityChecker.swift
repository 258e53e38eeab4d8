import FoundationEssentials
public import Reachable
import Synchronization

/// Keeps the document's `connectivity` true, as NetworkManager does: checks at once on every
/// network change and resolv.conf change, every `--connectivity-interval` while `full`, and
/// sooner while not (1 s, doubling up to the interval). `none` is decided before DNS is asked.
///
/// Everything runs on the probe engine's thread, as for `TargetProber`.
public final class ConnectivityChecker: Sendable {
    private struct State {
        var evaluation: ConnectivityEvaluation
        var addresses: [IPAddress]
        var schedule: ConnectivitySchedule
        var generation = 0
        /// Checks under way, at most `TargetProber.maximumRuns` (a stale one and a fresh one).
        var inFlight = 0
        var rerun = false
    }

    /// The engine timer key (targets use their index, from 0).
    private static let timerKey = -1

    private let spec: ConnectivitySpec
    private let state: Mutex<State>
    private let pipeline: ProbePipeline
    private let monitor: NetworkMonitor
    private let timeout: Duration

    /// - Parameters:
    ///   - monitor: its document already shows the check as `unknown`
    ///     (`ProbeConfiguration.initialConnectivity`), so its `since` is kept.
    public init(
        spec: ConnectivitySpec, configuration: ProbeConfiguration, engine: ProbeEngine, routes: RouteChecker,
        monitor: NetworkMonitor
    ) {
        self.spec = spec
        let since = monitor.current.connectivity.since
        state = Mutex(
            State(
                evaluation: ConnectivityEvaluation(state: .unknown, reason: nil, since: since),
                addresses: spec.url.literal.map { [$0] } ?? [],
                schedule: ConnectivitySchedule(interval: configuration.connectivityInterval)))
        pipeline = ProbePipeline(engine: engine, routes: routes)
        self.monitor = monitor
        timeout = configuration.connectivityTimeout
    }

    /// Checks now, then on every network change and as the schedule says.
    public func start() {
        monitor.observeNetworkChanges { [weak self] _ in
            guard let self else { return }
            pipeline.engine.perform { [weak self] in self?.networkChanged() }
        }
        pipeline.engine.perform { [self] in networkChanged() }
    }

    /// Checks again at once (resolv.conf changed).
    public func resolverChanged() {
        pipeline.engine.perform { [self] in begin() }
    }

    /// No usable route toward the check's host — by its last resolved addresses, or before the
    /// first resolution by the route-based state — is `none` at once; then a fresh check.
    private func networkChanged() {
        let addresses = state.withLock { $0.addresses }
        let noRoute =
            addresses.isEmpty ? monitor.current.state == .unreachable : pipeline.noneRoutable(addresses)
        if noRoute { record(ProbeOutcome.failed(.noRoute)) }
        state.withLock { $0.schedule.reset() }
        begin()
    }

    private func begin() {
        let run = state.withLock { state -> (Int, [IPAddress])? in
            state.generation += 1
            guard state.inFlight < TargetProber.maximumRuns else {
                state.rerun = true
                return nil
            }
            state.inFlight += 1
            return (state.generation, state.addresses)
        }
        guard let (generation, previous) = run else { return }
        pipeline.run(spec.url, timeout: timeout, expectedBody: spec.expectedResponse, previousAddresses: previous) {
            [self] result in
            finish(generation, result)
        }
    }

    private func finish(_ generation: Int, _ result: ProbePipeline.Result) {
        guard !result.wasCancelled else { return }
        let (current, rerun) = state.withLock { state -> (Bool, Bool) in
            state.inFlight -= 1
            guard state.generation == generation else {
                defer { state.rerun = false }
                return (false, state.rerun)
            }
            return (true, false)
        }
        if rerun { return begin() }
        guard current else { return }
        var outcome = result.outcome ?? ProbeOutcome.failed(result.failure ?? .error)
        // Never resolved, and the network itself is unreachable: the name failed for want of a route.
        if result.failure != nil, result.addresses.isEmpty, state.withLock({ $0.addresses.isEmpty }),
            monitor.current.state == .unreachable
        {
            outcome = .failed(.noRoute)
        }
        state.withLock { if !result.addresses.isEmpty { $0.addresses = result.addresses } }
        record(outcome)
        let delay = state.withLock { $0.schedule.delay(after: $0.evaluation.state) }
        pipeline.engine.schedule(key: Self.timerKey, at: .now + delay) { [self] in begin() }
    }

    private func record(_ outcome: ProbeOutcome) {
        let evaluation = state.withLock { state in
            state.evaluation = ConnectivityEvaluator.next(after: state.evaluation, outcome: outcome, at: Date())
            return state.evaluation
        }
        let status = ConnectivityStatus(
            state: evaluation.state, url: spec.url.text, reason: evaluation.reason, since: evaluation.since)
        monitor.update { $0.connectivity = status }
    }
}
