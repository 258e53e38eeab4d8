import CProbeLibraries
import Dispatch
import Glibc
import HeapModule
import Reachable
import Synchronization

/// Work submitted from any thread, taken by the engine thread.
enum EngineWork: Sendable {
    /// A driver's work: a probe, a resolution, a question to a nameserver, a file to follow.
    case task(EngineTask)
    /// Run on the engine thread (the orchestrators' state lives there).
    case perform(@Sendable () -> Void)
    /// Call the key's source's timer handler with its item at a time; a later one with the same
    /// key replaces it.
    case schedule(key: EngineTimerKey, at: ContinuousClock.Instant)
    /// What a source's keyed timers call, with the item (replaces the source's last one).
    case timerHandler(EngineTimerKey.Source, @Sendable (_ item: Int) -> Void)
    /// Run on the engine thread at a time, once; nothing replaces it.
    case after(ContinuousClock.Instant, @Sendable () -> Void)
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

/// The engine thread's state and loop: its drivers (`EngineDriver`, made as tasks name them) and
/// its timers. It names no probe kind: a task brings its driver's type.
///
/// Unchecked `Sendable`: the drivers and timers are touched only by the engine thread; what other
/// threads touch is behind `inbox`, and the loop's `wake`.
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

    /// Where the thread sleeps: every driver's descriptors, and the wake-up `submit` writes to.
    private let loop: EventLoop
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
    /// Every driver of the loop, made as tasks name them.
    private let drivers: EngineDrivers
    /// Called once per turn of the loop, after its completions and before it sleeps.
    private let turnEnded: @Sendable () -> Void

    init(settings: EngineSettings, turnEnded: @escaping @Sendable () -> Void) {
        loop = settings.loop
        self.turnEnded = turnEnded
        drivers = EngineDrivers(settings: settings)
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

    /// Queues work and wakes the thread (once per batch: the first submission of one wakes it).
    func submit(_ work: EngineWork) -> Bool {
        inbox.withLock { inbox in
            guard inbox.phase == .running else { return false }
            inbox.work.append(work)
            if inbox.work.count == 1 { loop.wake() }
            return true
        }
    }

    var statistics: EngineStatistics { counters.withLock { $0 } }

    func stop() {
        let wait = inbox.withLock { inbox -> Bool in
            switch inbox.phase {
            case .running:
                inbox.phase = .stopping
                loop.wake()
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
            for driver in drivers.all { driver.processTimeouts(now: now) }
            // Every completion of this turn (and of the last `process`) is in by now.
            turnEnded()
            // Sleep until a descriptor is ready (its owner is told), the next timeout or timer, or
            // a submission. Nothing pending: sleep until woken.
            var timeout: Int32 = -1
            let wakeUps = drivers.all.compactMap { $0.nextWakeUp(now: now) } + [timersDueFrom].compactMap { $0 }
            if let wakeUp = wakeUps.min() {
                timeout = Int32(clamping: max(0, (wakeUp - now).roundedUpMilliseconds))
            }
            guard loop.wait(timeout: timeout) else {
                // epoll_wait itself failed: never spin on it; timeouts still apply.
                usleep(10_000)
                continue
            }
            counters.withLock { $0.wakeUps += 1 }
        }
    }

    /// Starts a batch of work, in the order it was submitted.
    private func start(_ work: [EngineWork]) {
        for item in work {
            switch item {
            case .task(let task):
                task.start(drivers)
                // After: a test that waits for the count sees the work started, its driver made.
                if let counter = task.counted { counters.withLock { $0.count(counter) } }
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
            }
        }
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

    /// Ends everything: queued work that never started, and every driver's work under way (all
    /// completed as cancelled), then the handles.
    private func shutDown(unstarted: [EngineWork]) {
        for case .task(let task) in unstarted { task.cancel() }
        keyedTimers = KeyedTimers()
        timerHandlers = [:]
        oneShots = [:]
        deadlines = Heap()
        // The listeners hold the probing sources, which hold the engine: let both go.
        drivers.shutdown()
        loop.close()
        // Nothing can have been queued since the last batch was taken: `submit` refuses once stopping.
        inbox.withLock { $0.phase = .stopped }
    }
}
