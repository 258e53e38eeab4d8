import FoundationEssentials
import Synchronization

/// The process's view of network reachability: the one owner of the status document, fed by
/// independent sources (the kernel's path now; target probes and the connectivity check join
/// through `update`), shared by every connection.
///
/// Keeps the rules of NWPathMonitor and Android's ConnectivityManager: late joiners get the
/// current value first, `unknown` is a real state, the first reading is taken synchronously,
/// and `close()` is idempotent and finishes every stream while the last value stays readable.
///
/// A class around a `Mutex`, not an `actor`: sources publish from their own threads without
/// awaiting (the netlink thread must never wait), and libmicrohttpd's threads read `current`
/// synchronously from C callbacks, which cannot `await`. Every critical section is short and
/// nothing inside it calls out, except yielding to streams (which only enqueues) and the
/// sources' value edits of the document; no other lock is ever taken inside it. A source may
/// call `update` holding its own lock (lock order: source → monitor), never the other way.
public final class NetworkMonitor: Sendable {
    /// The process-wide instance, started on first use. Its `close()` does nothing, so no
    /// feature can end everyone else's streams by accident.
    public static let shared = NetworkMonitor(MonitorConfiguration(), isShared: true)

    private struct State {
        var latest: ReachabilityStatus
        /// Probe results applied but not yet published (`update(ifEpoch:deferred:)`): the next
        /// publication of any kind carries them, `publishDeferred()` at the latest.
        var deferred: ReachabilityStatus?
        var subscribers: [UInt64: AsyncStream<ReachabilityStatus>.Continuation] = [:]
        var changeObservers: [UInt64: @Sendable (NetworkChange) -> Void] = [:]
        var nextID: UInt64 = 0
        var batches: UInt64 = 0
        var isClosed = false
        var failure: MonitorFailure?
        var routing = RoutingSnapshot()
        var gates: [RouteGate] = []
        /// Bumped by every batch of kernel notifications when it arrives and in the update that
        /// publishes it: a probe result from a run begun before it is stale (`update(ifEpoch:)`).
        var epoch: UInt64 = 0
        /// From `batchArrived` until the batch is published: no probe result is taken meanwhile
        /// (`isCurrent`), and deferred ones wait for it.
        var batchUnderWay = false
        /// The last published batch's route verdicts, when any question had no usable route,
        /// with the epoch its document was published at (`unroutableSinceBatch`).
        var batchVerdicts: (epoch: UInt64, verdicts: RouteVerdicts)?
        /// What the cause needs beyond the document (`CauseRules`).
        var causeMemory = CauseMemory()
    }

    private let state: Mutex<State>
    private let source: NetlinkSource?
    private let isShared: Bool
    /// The outside address of each family whose route decides the path (`--ipv4-destination`,
    /// `--ipv6-destination`): an interface is an uplink of a family when it has a route there.
    package let outsideDestinations: [AddressFamily: IPAddress]

    /// A monitor this caller owns and closes. Takes the first full reading before returning.
    ///
    /// - Throws: `MonitorFailure` when the kernel's routing sockets cannot be opened or read.
    public convenience init(configuration: MonitorConfiguration = MonitorConfiguration()) throws(MonitorFailure) {
        self.init(configuration, isShared: false)
        if let failure { throw failure }
    }

    /// Opens the source and takes the first reading; a failure to start is kept in `failure`
    /// (the shared instance cannot throw: it reports it through liveness).
    private init(_ configuration: MonitorConfiguration, isShared: Bool) {
        self.isShared = isShared
        outsideDestinations = [
            .ipv4: IPAddress(configuration.ipv4Destination), .ipv6: IPAddress(configuration.ipv6Destination),
        ].compactMapValues { $0 }
        state = Mutex(State(latest: Self.unknownStatus(configuration)))
        let opened = Result { () throws(SystemError) in
            try NetlinkSource(configuration: configuration.withoutFirstDocument)
        }
        source = try? opened.get()
        do {
            _ = try opened.get()
            try seedAndStart()
        } catch {
            source?.stop()
            state.withLock { $0.failure = MonitorFailure(.cannotStart, cause: error) }
        }
    }

    /// The first full reading, synchronously, then the source's thread.
    private func seedAndStart() throws(SystemError) {
        guard let source else { return }
        let (path, routing) = try source.seed()
        state.withLock { $0.routing = routing }
        update { $0.path = path }
        try source.start { [weak self] report in self?.receive(report) }
    }

    private static func unknownStatus(_ configuration: MonitorConfiguration) -> ReachabilityStatus {
        var status = ReachabilityStatus(
            path: .unknown, targets: configuration.initialTargets, connectivity: configuration.initialConnectivity,
            dns: configuration.initialDNS, sequence: 0, changedAt: Date())
        status.targetsFile = configuration.initialTargetsFile
        return status
    }

    /// What the kernel source learned. While the kernel cannot be observed the document says
    /// `unknown` (reachd does not know); a failure for good also fails liveness.
    private func receive(_ report: NetlinkSource.Report) {
        switch report {
        case .path(let path, let routing, let batch):
            state.withLock {
                $0.failure = nil
                $0.routing = routing
                // Also after a reconnection, which has no `batchArrived`.
                if batch != nil {
                    $0.epoch += 1
                    $0.batchUnderWay = true
                }
            }
            defer {
                // What the probes applied while the batch was judged, after its document: not
                // left for the engine's next turn.
                state.withLock { $0.batchUnderWay = false }
                publishDeferred()
            }
            guard let batch else {
                update { $0.path = path }
                return
            }
            // Route questions first, outside every lock: the last known addresses of every source
            // that probes (one document per change, see `RouteGate`).
            let (asked, perGate) = gateVerdicts(batch)
            let now = Date()
            // Each gate judges under its own lock alone; the batch's document takes every edit.
            let edits = perGate.compactMap { gate, verdicts in gate.judge(verdicts, path, now) }
            var published: UInt64?
            update(bumpingEpoch: true) { status, epoch, _ in
                status.path = path
                for edit in edits { edit(&status) }
                published = epoch
            }
            // Tagged with the epoch of its own document: a batch that arrives meanwhile bumps it.
            // The batch is judged and published: results are taken again before the observers
            // are told, or a run they begin that ends at once (`no-route`) would be refused and,
            // setting no timer, never run again.
            state.withLock { state in
                state.batchVerdicts = published.flatMap { asked.isEmpty ? nil : ($0, asked) }
                state.batchUnderWay = false
            }
            notifyNetworkChanged()
        case .batchArrived:
            // From now, not only when the batch is published: reading, deriving and judging it
            // takes a while with a large fleet, and a result of a run begun before the link went
            // down came in between, as a document of its own (docs/scale.md).
            state.withLock {
                $0.epoch += 1
                $0.batchUnderWay = true
            }
        case .networkChanged:
            state.withLock { $0.batchUnderWay = false }
            update(bumpingEpoch: true) { _, _, _ in }
            notifyNetworkChanged()
        case .unobservable(let cause, let attempts, let givenUp):
            state.withLock { state in
                state.batchUnderWay = false
                if givenUp { state.failure = MonitorFailure(.connectionLost(attempts: attempts), cause: cause) }
            }
            update { $0.path = .unknown }
        }
    }

    /// Asks the kernel every gate's questions (on the netlink thread, no lock held), all in one
    /// batch: a question two gates share is asked once (the batch asks once per group of
    /// addresses; not made a set first, which costs a link-down a hashed insertion a question:
    /// docs/scale.md).
    ///
    /// - Returns: every verdict in the order asked, and each gate's share.
    private func gateVerdicts(
        _ questions: RouteQuestions
    ) -> (all: RouteVerdicts, perGate: [(RouteGate, RouteVerdicts)]) {
        let gates = state.withLock { $0.gates }
        let asked = gates.map { $0.questions() }
        // One list for the kernel (a group asked once for every gate), its answers handed back
        // to each gate by place.
        let all = asked.count == 1 ? asked[0] : Array(asked.joined())
        let unroutable = questions.unroutable(all)
        var start = 0
        let perGate = zip(gates, asked).map { gate, questions in
            defer { start += questions.count }
            return (
                gate,
                RouteVerdicts(questions: questions, unroutable: Array(unroutable[start..<start + questions.count]))
            )
        }
        return (RouteVerdicts(questions: all, unroutable: unroutable), perGate)
    }

    /// The questions the last batch's route gates found without a usable route, while no batch
    /// has come since its document (`nil` otherwise, or when every question had a route): what a
    /// probe's own route check may take as answered. A link-down re-probes every target at once,
    /// and each run asked the kernel again what the batch had just asked it — a lookup a target on
    /// the engine thread while the document was being encoded for the streams (docs/scale.md).
    package var unroutableSinceBatch: (epoch: UInt64, verdicts: RouteVerdicts)? {
        state.withLock { state in
            guard let batch = state.batchVerdicts else { return nil }
            guard batch.epoch == state.epoch else {
                state.batchVerdicts = nil  // superseded: its questions are not kept
                return nil
            }
            return batch
        }
    }

    private func notifyNetworkChanged() {
        let observers = state.withLock { state in
            state.batches += 1
            let change = NetworkChange(batch: state.batches)
            return (Array(state.changeObservers.values), change)
        }
        for observer in observers.0 { observer(observers.1) }
    }

    /// Usable interfaces and addresses as of the last kernel reading, for `RouteChecker`.
    package var routingSnapshot: RoutingSnapshot { state.withLock { $0.routing } }

    /// The latest status (the last one observed, once closed).
    public var current: ReachabilityStatus { state.withLock { $0.latest } }

    /// Why the monitor cannot observe the kernel for good; `nil` while it works (or recovers).
    public var failure: MonitorFailure? { state.withLock { $0.failure } }

    /// Whether `close()` has ended this monitor.
    public var isClosed: Bool { state.withLock { $0.isClosed } }

    /// What the netlink source has done so far.
    public var statistics: SourceStatistics { source?.statistics ?? SourceStatistics() }

    /// A new subscription: the current status at once, then every change. A slow consumer finds
    /// only the newest status waiting (status is state, not a log). Finishes when the monitor closes.
    public var updates: AsyncStream<ReachabilityStatus> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: ReachabilityStatus.self, bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state -> UInt64? in
            continuation.yield(state.latest)
            guard !state.isClosed else { return nil }
            state.nextID += 1
            state.subscribers[state.nextID] = continuation
            return state.nextID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// How many subscriptions are open (for tests).
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Calls `observer` on the kernel source's thread after every batch, whether or not the
    /// document changed: for sources that only need a nudge (the probes' schedulers, the netlink
    /// counters of `/metrics`). It must return at once.
    /// Returns `nil` (and never calls) once the monitor is closed.
    @discardableResult
    package func observeNetworkChanges(_ observer: @escaping @Sendable (NetworkChange) -> Void) -> UInt64? {
        state.withLock { state in
            guard !state.isClosed else { return nil }
            state.nextID += 1
            state.changeObservers[state.nextID] = observer
            return state.nextID
        }
    }

    package func removeNetworkChangeObserver(_ id: UInt64?) {
        guard let id else { return }
        _ = state.withLock { $0.changeObservers.removeValue(forKey: id) }
    }

    /// A source whose last known addresses decide at once when a batch takes their route.
    package func addRouteGate(_ gate: RouteGate) {
        state.withLock { $0.gates.append(gate) }
    }

    /// The current network epoch: a probe run records it when it begins.
    package var networkEpoch: UInt64 { state.withLock { $0.epoch } }

    /// Whether a result of a run begun at `epoch` is taken now: no batch of kernel notifications
    /// came since (its route gate may have judged what the result would overwrite; a fresh run
    /// follows it), and none is being judged. A source asks before it records a result in its
    /// book, then updates the document with `update(ifEpoch:)`, which asks again: a batch arriving
    /// in between leaves that book one result ahead of the document until the batch's fresh run.
    package func isCurrent(_ epoch: UInt64) -> Bool {
        state.withLock { $0.epoch == epoch && !$0.batchUnderWay }
    }

    /// Merges a probe result begun at `epoch` while it is current (`isCurrent`). `change` runs only
    /// when applied.
    ///
    /// - Returns: whether the change was applied.
    ///
    /// - Parameter deferred: apply now, publish with the next publication or `publishDeferred()`:
    ///   the probe engine defers every result of one turn of its loop and publishes them as one
    ///   document (coalescing without timers, as a netlink batch is). A large fleet answering
    ///   within a second made a document per target, each of every target, every one copied,
    ///   compared, diffed and encoded.
    @discardableResult
    package func update(
        ifEpoch epoch: UInt64, deferred: Bool = false, _ change: (inout ReachabilityStatus) -> Void
    ) -> Bool {
        var applied = false
        update(bumpingEpoch: false, deferred: deferred) { status, current, batchUnderWay in
            guard current == epoch, !batchUnderWay else { return }
            applied = true
            change(&status)
        }
        return applied
    }

    /// Publishes what deferred updates applied (one document, if the content changed) — unless a
    /// batch of kernel notifications is waiting or being judged: its document carries them, as
    /// every publication carries what was deferred. A probe that found a route gone is ahead of
    /// the batch that says so; published alone, its verdict made a document before the link-down's
    /// one (targets `no-route` while the path still read `reachable`).
    package func publishDeferred() {
        // The kernel is asked (a poll that does not wait) only when there is something to hold.
        guard state.withLock({ $0.deferred != nil && !$0.batchUnderWay }),
            source?.notificationsPending() != true
        else { return }
        state.withLock { state in
            guard !state.isClosed, !state.batchUnderWay, let next = state.deferred.take() else { return }
            Self.publish(next, in: &state)
        }
    }

    /// Merges one source's contribution into the document. A new status (and sequence) only
    /// when the document differs from the last apart from its bookkeeping. `change` runs under
    /// the monitor's lock: it edits values only, and takes no lock.
    package func update(_ change: (inout ReachabilityStatus) -> Void) {
        update(bumpingEpoch: false) { status, _, _ in change(&status) }
    }

    /// - Parameter change: told the epoch, and whether a batch is being judged.
    private func update(
        bumpingEpoch: Bool, deferred: Bool = false,
        _ change: (inout ReachabilityStatus, _ epoch: UInt64, _ batchUnderWay: Bool) -> Void
    ) {
        state.withLock { state in
            guard !state.isClosed else { return }
            if bumpingEpoch { state.epoch += 1 }
            // Taken, not copied: the deferred document is edited in place turn after turn.
            var next = state.deferred.take() ?? state.latest
            change(&next, state.epoch, state.batchUnderWay)
            if deferred {
                state.deferred = next
            } else {
                Self.publish(next, in: &state)
            }
        }
    }

    /// `--web-config-file`'s last reading was refused (`nil`: the one read last is in force): a
    /// cause of layer `config` while nothing else fails.
    package func setWebConfigRefusal(_ refusal: CauseMemory.RefusedFile?) {
        state.withLock { $0.causeMemory.webConfigRefusal = refusal }
        update { _ in }
    }

    /// A new status (and sequence) only when `next` differs from the last apart from its
    /// bookkeeping. The cause is named here, once per document: it keeps its `since` while it is
    /// the same layer, family and subject.
    private static func publish(_ next: ReachabilityStatus, in state: inout State) {
        var next = next
        let now = Date()
        state.causeMemory.remember(next.pathFacts)
        next.cause = CauseRules.cause(of: next, remembering: state.causeMemory).map { cause in
            var cause = cause
            if let last = state.latest.cause, last.isSameCause(as: cause) {
                cause.since = last.since
            } else {
                cause.since = now
            }
            return cause
        }
        guard !next.hasSameContent(as: state.latest) else { return }
        next.sequence = state.latest.sequence + 1
        next.changedAt = now
        next.stateSince = next.state == state.latest.state ? state.latest.stateSince : next.changedAt
        state.latest = next
        for continuation in state.subscribers.values {
            continuation.yield(next)
        }
    }

    /// Stops observing the kernel, finishes every subscriber's stream and forgets the change
    /// observers. Idempotent; does nothing on `shared`.
    public func close() {
        guard !isShared else { return }
        source?.stop()
        let subscribers = state.withLock { state in
            state.isClosed = true
            state.changeObservers = [:]
            state.gates = []
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        // Outside the lock: finishing runs each stream's onTermination, which takes it.
        for continuation in subscribers { continuation.finish() }
    }

    deinit {
        source?.stop()
    }
}
