import DequeModule
import Reachable

/// The one probe-run mechanism shared by the targets, the connectivity check and the nameserver
/// check: every item runs at once on every batch of netlink notifications and resolv.conf change,
/// then when its own source says (an interval, a backoff; with many items the runs after such a
/// round are spread across the interval, `spread`); a stale run's result is dropped
/// (`ProbeRuns`), and so is a result whose run began before a batch whose route gate may already
/// have judged it (`NetworkMonitor.update(ifEpoch:)`): the batch's fresh run follows.
///
/// A source gives two things: how to run one item, and how to record its result (judge it, update
/// the document, say when to run again). That is all a new probing source writes. A run may
/// report a part of its result before it ends (a family resolved before the other: RFC 8305);
/// a part is recorded like a result, under the same rules, but only the end schedules the next run.
///
/// With `maxRunsInFlight` (the targets), no more runs than that are under way at once: a large
/// round waits its turn in order, and each run's timeout counts from its own start, not the
/// round's. All at once, every transfer was walked on every wake-up and thousands ran out of time
/// before they were sent (a false `unreachable (timeout)` after a link came back: docs/scale.md).
///
/// Unchecked `Sendable`: confined to the probe engine's thread. Every entry point (`start`,
/// `runAll`, `resize`) hops onto it with `engine.perform`; runs, completions and timers already
/// run there — no lock, and none held across a kernel question.
final class ProbeScheduler<Result: Sendable>: @unchecked Sendable {
    /// Starts one run of an item; calls `report` for each part ready early (zero or more times),
    /// then the completion once, all on the engine thread (`nil`: cancelled).
    typealias Run = (
        _ item: Int, _ report: @escaping @Sendable (Result) -> Void,
        _ completion: @escaping @Sendable (Result?) -> Void
    ) -> Void
    /// Records a current result (`isLast`: the run's end, else a part) begun at `epoch`; returns
    /// the delay until the item's next run, or `nil` when the result was dropped (a batch came
    /// since: its fresh run is already queued). The delay of a part is not used.
    typealias Record = (_ item: Int, _ result: Result, _ epoch: UInt64, _ isLast: Bool) -> Duration?
    /// The items a network change answered itself (their runs would ask only what the change's
    /// route gate just asked, and send nothing), by item; asked once per such round.
    typealias AnsweredByChange = () -> [Bool]

    let engine: ProbeEngine
    private let monitor: NetworkMonitor
    /// Whose timers: one pending timer per item, keyed by this and the item.
    private let timerSource: EngineTimerKey.Source
    private let run: Run
    private let record: Record
    private let answeredByChange: AnsweredByChange?
    private var runs: [ProbeRuns]
    /// Whether the item's newest run began with every other item's (start, a network change).
    private var beganInRound: [Bool]
    /// The regular interval between runs, if rounds are to be spread across it (`spread`).
    private let spreadInterval: Duration?
    private var generations = 0
    /// At most this many runs under way (`nil`: no limit); the rest wait in `waiting`.
    private let maxRunsInFlight: Int?
    private var runsInFlight = 0
    /// Items whose run waits for room, in order, each once; `waitingInRound` as `beganInRound`.
    private var waiting = Deque<Int>()
    private var isWaiting: [Bool]
    private var waitingInRound: [Bool]
    /// A run may end while it is being started (no route: nothing to send): the loop admitting
    /// waiting runs goes on instead of recursing once per item.
    private var isAdmitting = false
    /// Runs numbered below this began before the last `resize`: their item may be another now.
    private var firstOfThisSize = 0

    /// - Parameters:
    ///   - timerSource: names this source's timers apart from every other source's.
    ///   - spreadInterval: the regular interval, when the runs after a round are to be spread
    ///     across it (the targets; `spread`).
    ///   - maxRunsInFlight: at most this many runs under way at once (the targets).
    ///   - answeredByChange: which items a network change's round leaves out (the targets whose
    ///     every address the change's route gate found without a route: otherwise a link-down
    ///     runs every target only to send nothing, on the engine's core while its one document
    ///     is being made on the other; docs/scale.md).
    init(
        engine: ProbeEngine, monitor: NetworkMonitor, items: Int, timerSource: EngineTimerKey.Source,
        spreadInterval: Duration? = nil, maxRunsInFlight: Int? = nil,
        run: @escaping Run,
        record: @escaping Record,
        answeredByChange: AnsweredByChange? = nil
    ) {
        self.engine = engine
        self.monitor = monitor
        self.timerSource = timerSource
        self.spreadInterval = spreadInterval
        self.maxRunsInFlight = maxRunsInFlight
        self.run = run
        self.record = record
        self.answeredByChange = answeredByChange
        runs = Array(repeating: ProbeRuns(), count: items)
        beganInRound = Array(repeating: false, count: items)
        isWaiting = Array(repeating: false, count: items)
        waitingInRound = Array(repeating: false, count: items)
    }

    /// How many items' runs are spread into one group (`spread`). Runs spread one by one cost
    /// several times the CPU per probe of runs together, every probe paying its own wake-ups; all
    /// at once, a round of thousands holds every socket and buffer at the same time. Groups of 100
    /// keep what 100 targets cost at any count (docs/scale.md).
    static var groupSize: Int { 100 }

    /// Runs every item now, then on every network change and as the source says.
    func start() {
        engine.onTimer(of: timerSource) { [weak self] item in self?.begin(item) }
        monitor.observeNetworkChanges { [weak self] _ in
            self?.engine.perform { [weak self] in self?.beginAll(afterNetworkChange: true) }
        }
        engine.perform { [self] in beginAll() }
    }

    /// Runs every item again at once (resolv.conf changed).
    func runAll() {
        engine.perform { [self] in beginAll() }
    }

    /// Runs `item` at once, unless a run of it is under way or waiting: that run's result is as
    /// fresh, and a new one would only make it stale. Its timer is set again when the run ends.
    func runSoon(_ item: Int) {
        engine.perform { [self] in
            guard item < runs.count, runs[item].isIdle, !isWaiting[item] else { return }
            begin(item)
        }
    }

    /// The items changed (nameservers added or removed): every run under way becomes stale.
    /// Call on the engine thread, then `start` or `runAll`.
    func resize(to items: Int) {
        runs = Array(repeating: ProbeRuns(), count: items)
        beganInRound = Array(repeating: false, count: items)
        isWaiting = Array(repeating: false, count: items)
        waitingInRound = Array(repeating: false, count: items)
        waiting = []
        firstOfThisSize = generations + 1
    }

    /// Begins every item's run. After a network change an item the change answered is left to
    /// its pending timer — only when it has one, and no run under way or waiting: a run begun
    /// before the change is dropped when it ends (`ProbeRuns`, `NetworkMonitor.update(ifEpoch:)`)
    /// and sets no timer, so such an item must run now or never again.
    private func beginAll(afterNetworkChange: Bool = false) {
        let answered = afterNetworkChange ? answeredByChange?() ?? [] : []
        for item in runs.indices {
            if item < answered.count, answered[item], runs[item].isIdle, !isWaiting[item],
                engine.hasTimer(EngineTimerKey(timerSource, item: item))
            {
                continue
            }
            begin(item, inRound: true)
        }
    }

    /// Begins a run of `item` now, or as soon as there is room (`maxRunsInFlight`).
    private func begin(_ item: Int, inRound: Bool = false) {
        guard item < runs.count else { return }
        if let limit = maxRunsInFlight, runsInFlight >= limit || !waiting.isEmpty {
            waitingInRound[item] = waitingInRound[item] || inRound
            if !isWaiting[item] {
                isWaiting[item] = true
                waiting.append(item)
            }
            return admitWaiting()
        }
        startRun(item, inRound: inRound)
    }

    /// Starts the waiting runs there is room for, in order.
    private func admitWaiting() {
        guard !isAdmitting else { return }
        isAdmitting = true
        defer { isAdmitting = false }
        while runsInFlight < maxRunsInFlight ?? .max, let item = waiting.popFirst() {
            guard item < runs.count else { continue }
            isWaiting[item] = false
            let inRound = waitingInRound[item]
            waitingInRound[item] = false
            startRun(item, inRound: inRound)
        }
    }

    private func startRun(_ item: Int, inRound: Bool) {
        generations += 1
        let generation = generations
        beganInRound[item] = inRound
        guard runs[item].begin(generation) else { return }
        runsInFlight += 1
        let epoch = monitor.networkEpoch
        run(
            item, { [self] part in recordPart(item, generation, epoch, part) },
            { [self] result in finish(item, generation, epoch, result) })
    }

    /// A part of a run still under way: it counts only while that run is the newest.
    private func recordPart(_ item: Int, _ generation: Int, _ epoch: UInt64, _ part: Result) {
        guard generation >= firstOfThisSize, item < runs.count, runs[item].isNewest(generation) else { return }
        _ = record(item, part, epoch, false)
    }

    private func finish(_ item: Int, _ generation: Int, _ epoch: UInt64, _ result: Result?) {
        runsInFlight -= 1
        defer { admitWaiting() }
        guard generation >= firstOfThisSize, item < runs.count else { return }
        switch runs[item].finish(generation) {
        case .stale: return
        case .runAgain: return begin(item)
        case .current: break
        }
        guard let result, let delay = record(item, result, epoch, true) else { return }
        engine.schedule(key: EngineTimerKey(timerSource, item: item), at: .now + spread(item, delay))
    }

    /// A run that began with every other item's ended about when theirs did: its next regular run
    /// comes after its group's share of the interval — `groupSize` items a group, group `g` of `G`
    /// after (g + 1)/G of it — so the rounds that follow are `G` bursts of 100 spread across the
    /// interval instead of one of every item (100 items or fewer: one group, the interval). Never
    /// later than the interval; other delays (a backoff confirming a failure) are kept.
    private func spread(_ item: Int, _ delay: Duration) -> Duration {
        guard let interval = spreadInterval, delay == interval, beganInRound[item] else { return delay }
        return Self.groupDelay(item: item, items: runs.count, interval: interval)
    }

    /// When item `item` of `items` runs after a round: its group's share of `interval`.
    static func groupDelay(item: Int, items: Int, interval: Duration) -> Duration {
        let groups = (items + groupSize - 1) / groupSize
        guard groups > 1 else { return interval }
        return interval / groups * (item / groupSize + 1)
    }
}
