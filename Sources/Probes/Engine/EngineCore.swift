import CProbeLibraries
import Dispatch
import Glibc
import HeapModule
import Reachable
import Synchronization

/// Work submitted from any thread, taken by the engine thread.
enum EngineWork: Sendable {
    /// A libcurl transfer: a TCP connect only, or an HTTP(S) request.
    case transfer(ProbeJob, connectOnly: Bool, @Sendable (ProbeOutcome) -> Void)
    /// Resolve a host out of an egress: one family's addresses, or (`nil`) both families' in one
    /// lookup.
    case resolve(String, AddressFamily?, ResolverWay, ContinuousClock.Instant, @Sendable (ResolveOutcome) -> Void)
    /// ICMP echoes to one address (`icmp://`).
    case ping(ProbeJob, @Sendable (ProbeOutcome) -> Void)
    /// Ask one nameserver alone (the nameserver check, `dns://` targets).
    case askNameserver(NameserverQuestion, timeout: Duration, @Sendable (NameserverAnswer) -> Void)
    /// Run on the engine thread (the orchestrators' state lives there).
    case perform(@Sendable () -> Void)
    /// Call the key's source's timer handler with its item at a time; a later one with the same
    /// key replaces it.
    case schedule(key: EngineTimerKey, at: ContinuousClock.Instant)
    /// What a source's keyed timers call, with the item (replaces the source's last one).
    case timerHandler(EngineTimerKey.Source, @Sendable (_ item: Int) -> Void)
    /// Run on the engine thread at a time, once; nothing replaces it.
    case after(ContinuousClock.Instant, @Sendable () -> Void)
    /// Call on the engine thread whenever the resolver's configuration changed (after it was read).
    case resolverChanged(@Sendable () -> Void)
    /// Call on the engine thread whenever the file at the path changes.
    case watch(path: String, completedWritesOnly: Bool, @Sendable () -> Void)
}

/// A timer in the engine's heap, ordered by deadline (then by when it was set, its number): a
/// source's keyed timer (a later timer with the same key replaces it), or a one-shot (`key` nil).
private struct TimerEntry: Comparable {
    var deadline: ContinuousClock.Instant
    var number: UInt64
    var key: EngineTimerKey?

    static func < (lhs: Self, rhs: Self) -> Bool { (lhs.deadline, lhs.number) < (rhs.deadline, rhs.number) }
    static func == (lhs: Self, rhs: Self) -> Bool { lhs.number == rhs.number }
}

/// The engine thread's state and loop: its drivers (`EngineDriver`: curl's transfers, the
/// resolver's and the nameserver check's c-ares channels, the file watches) and its timers.
///
/// Unchecked `Sendable`: the multi handle and the drivers are touched only by the engine
/// thread (and by `deinit`, after it ended); what other threads touch is behind `inbox`.
final class EngineCore: @unchecked Sendable {
    private enum Phase {
        case running
        case stopping
        case stopped
    }

    private struct Inbox {
        var phase = Phase.running
        var work: [EngineWork] = []
    }

    private let multi: UnsafeMutableRawPointer
    private let inbox = Mutex(Inbox())
    private let thread = Mutex<DedicatedThread?>(nil)
    private let counters = Mutex(EngineStatistics())
    /// Each key's pending timer, by number: a heap entry whose number is not its key's is one a
    /// later timer replaced. Numbers only, no closure per timer: each source's handler is called
    /// with the item (a closure per probe is a block left among the transfers under way, one per
    /// target: docs/scale.md).
    private var keyedTimers = KeyedTimers()
    private var timerHandlers: [EngineTimerKey.Source: @Sendable (_ item: Int) -> Void] = [:]
    /// The one-shot timers' bodies, by number.
    private var oneShots: [UInt64: @Sendable () -> Void] = [:]
    private var timersSet: UInt64 = 0
    /// Every timer set, earliest first (replaced ones stay until their time, then are skipped):
    /// the loop wakes many times per transfer, and scanning every target's timer on each wake-up
    /// grows with the square of the targets (docs/scale.md).
    private var deadlines = Heap<TimerEntry>()
    private let fileWatches = FileWatches()
    /// The one watch of resolv.conf (made when the thread starts): drained before every batch of
    /// resolutions — a resolution submitted right after a change already uses the new file — and
    /// whenever it is ready; then the resolver reads the file again and the listeners re-run.
    private var resolverWatch: FileWatch?
    private var resolverListeners: [@Sendable () -> Void] = []
    private let resolver: Resolver
    private let nameservers: NameserverQueries
    private let transfers: CurlTransfers
    private let echoes: ICMPEchoes
    /// Every driver of the loop, in the order they are served.
    private let drivers: [any EngineDriver]
    /// Called once per turn of the loop, after its completions and before it sleeps.
    private let turnEnded: @Sendable () -> Void

    init(
        multi: UnsafeMutableRawPointer, resolver: Resolver, nameservers: NameserverQueries,
        trustedCertificates: String?,
        echoCount: Int, turnEnded: @escaping @Sendable () -> Void
    ) {
        self.multi = multi
        self.turnEnded = turnEnded
        self.resolver = resolver
        self.nameservers = nameservers
        transfers = CurlTransfers(multi: multi, trustedCertificates: trustedCertificates)
        echoes = ICMPEchoes(count: echoCount)
        drivers = [transfers, resolver.channels, nameservers.channels, echoes, fileWatches]
    }

    deinit {
        reachd_curl_multi_cleanup(multi)
    }

    func startThread() throws(ProbeEngineError) {
        do {
            let started = try DedicatedThread { [self] in run() }
            thread.withLock { $0 = started }
        } catch {
            inbox.withLock { $0.phase = .stopped }
            throw ProbeEngineError("cannot start the probe thread: \(error)")
        }
    }

    /// Queues work and wakes the thread. `curl_multi_wakeup` is called under the lock on purpose: it
    /// only writes to curl's wake-up socket (no callback can take the lock), and holding the lock
    /// guarantees the multi handle is not being cleaned up meanwhile.
    func submit(_ work: EngineWork) -> Bool {
        inbox.withLock { inbox in
            guard inbox.phase == .running else { return false }
            inbox.work.append(work)
            if inbox.work.count == 1 { reachd_curl_multi_wakeup(multi) }
            return true
        }
    }

    var statistics: EngineStatistics { counters.withLock { $0 } }

    func stop() {
        let wait = inbox.withLock { inbox -> Bool in
            switch inbox.phase {
            case .running:
                inbox.phase = .stopping
                reachd_curl_multi_wakeup(multi)
                return true
            case .stopping: return true
            case .stopped: return false
            }
        }
        guard wait else { return }
        // From the engine thread itself (a completion) this returns at once; the loop then ends.
        thread.withLock { $0 }?.join()
    }

    /// Whether the caller runs on the engine thread (for the orchestrators' confinement checks).
    var isEngineThread: Bool { thread.withLock { $0 }?.isCurrent ?? false }

    // MARK: - The engine thread

    private func run() {
        if let watch = try? FileWatch(path: resolver.resolvConfPath, completedWritesOnly: true) {
            resolverWatch = watch
            // Drained here when it is ready on its own; `start` drains it before resolutions too.
            fileWatches.add(watch) { [self] in followResolverConfiguration(changed: true) }
        }
        var descriptors: [curl_waitfd] = []
        while true {
            let (work, stopping) = inbox.withLock { inbox in
                defer { inbox.work = [] }
                return (inbox.work, inbox.phase != .running)
            }
            if stopping {
                shutDown(unstarted: work)
                return
            }
            start(work)
            runDueTimers()
            let now = ContinuousClock.now
            for driver in drivers { driver.processTimeouts(now: now) }
            // Every completion of this turn (and of the last `process`) is in by now.
            turnEnded()
            descriptors.removeAll(keepingCapacity: true)
            for driver in drivers { driver.appendWaitDescriptors(to: &descriptors) }
            // Sleep until a descriptor (curl's, c-ares', the wake-up, a watched file) is ready or the
            // next timeout or timer; curl shortens the wait to its own timers. Nothing pending: sleep
            // until woken.
            var timeout = Int32.max
            let wakeUps = drivers.compactMap { $0.nextWakeUp(now: now) } + [timersDueFrom].compactMap { $0 }
            if let wakeUp = wakeUps.min() {
                timeout = Int32(clamping: max(0, (wakeUp - now).roundedUpMilliseconds))
            }
            let count = UInt32(descriptors.count)
            let polled = descriptors.withUnsafeMutableBufferPointer { buffer in
                reachd_curl_multi_poll(multi, buffer.baseAddress, count, timeout, nil)
            }
            guard polled == CURLM_OK else {
                // poll(2) itself failed (curl retries EINTR): never spin on it; timeouts still apply.
                usleep(10_000)
                continue
            }
            for driver in drivers { driver.process(descriptors) }
            counters.withLock { $0.wakeUps += 1 }
        }
    }

    /// Starts a batch: resolv.conf is compared once per batch that resolves anything.
    private func start(_ work: [EngineWork]) {
        if work.contains(where: { if case .resolve = $0 { true } else { false } }) {
            followResolverConfiguration(changed: resolverWatch?.drain() ?? false)
        }
        for item in work {
            switch item {
            case .transfer(let job, let connectOnly, let completion):
                counters.withLock { $0.probes += 1 }
                transfers.start(job, connectOnly: connectOnly, completion: completion)
            case .ping(let job, let completion):
                counters.withLock { $0.probes += 1 }
                echoes.start(job, completion: completion)
            case .resolve(let host, let family, let way, let deadline, let completion):
                counters.withLock { $0.resolutions += 1 }
                resolver.start(host: host, family: family, way: way, deadline: deadline, completion: completion)
            case .askNameserver(let question, let timeout, let completion):
                counters.withLock { $0.nameserverQueries += 1 }
                nameservers.ask(question, timeout: timeout, completion: completion)
            case .perform(let body):
                body()
            case .schedule(let key, let deadline):
                timersSet += 1
                keyedTimers[key] = timersSet
                deadlines.insert(TimerEntry(deadline: deadline, number: timersSet, key: key))
            case .timerHandler(let source, let handler):
                timerHandlers[source] = handler
            case .after(let deadline, let body):
                timersSet += 1
                oneShots[timersSet] = body
                deadlines.insert(TimerEntry(deadline: deadline, number: timersSet, key: nil))
            case .resolverChanged(let listener):
                resolverListeners.append(listener)
            case .watch(let path, let completedWritesOnly, let onChange):
                if let watch = try? FileWatch(path: path, completedWritesOnly: completedWritesOnly) {
                    fileWatches.add(watch, onChange: onChange)
                }
            }
        }
    }

    /// Reads resolv.conf again if the watch saw it change (and the first time), then tells the
    /// listeners, so the probes resolve again through the new file.
    private func followResolverConfiguration(changed: Bool) {
        resolver.prepare(reread: changed)
        if changed { for listener in resolverListeners { listener() } }
    }

    /// Runs (and forgets) every timer whose time has come, earliest first; a timer may schedule
    /// the next one (it arrives as work, in the next batch).
    private func runDueTimers() {
        let now = ContinuousClock.now
        while let first = deadlines.min, first.deadline <= now {
            deadlines.removeMin()
            guard let key = first.key else {
                oneShots.removeValue(forKey: first.number)?()
                continue
            }
            guard keyedTimers[key] == first.number else { continue }
            keyedTimers[key] = nil
            timerHandlers[key.source]?(key.item)
        }
    }

    /// Whether `key` has a timer set and not yet run (on the engine thread only; a timer still
    /// in the inbox is not counted).
    func hasTimer(_ key: EngineTimerKey) -> Bool {
        keyedTimers[key] != nil
    }

    /// When the next timer is due (a replaced one may wake the loop once for nothing).
    private var timersDueFrom: ContinuousClock.Instant? { deadlines.min?.deadline }

    /// Ends everything: queued work that never started, transfers and resolutions under way (all
    /// completed as cancelled), then the handles.
    private func shutDown(unstarted: [EngineWork]) {
        let cancelled = ProbeOutcome(failure: .error, detail: "the engine stopped", wasCancelled: true)
        for item in unstarted {
            switch item {
            case .transfer(_, _, let completion), .ping(_, let completion): completion(cancelled)
            case .resolve(_, _, _, _, let completion):
                completion(
                    ResolveOutcome(addresses: [], failure: .error, detail: "the engine stopped", wasCancelled: true))
            case .askNameserver(let question, _, let completion):
                completion(
                    NameserverAnswer(
                        server: question.server, failure: .error, detail: "the engine stopped", wasCancelled: true))
            case .perform, .schedule, .timerHandler, .after, .resolverChanged, .watch: break
            }
        }
        keyedTimers = KeyedTimers()
        timerHandlers = [:]
        oneShots = [:]
        deadlines = Heap()
        // The listeners hold the probing sources, which hold the engine: let both go.
        resolverListeners = []
        resolverWatch = nil
        for driver in drivers { driver.shutdown() }
        // Nothing can have been queued since the last batch was taken: `submit` refuses once stopping.
        inbox.withLock { $0.phase = .stopped }
    }
}
