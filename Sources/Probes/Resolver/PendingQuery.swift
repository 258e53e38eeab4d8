/// What a c-ares query ends with: it says how long it took.
protocol TimedOutcome: Sendable {
    var duration: Duration { get set }
}

extension ResolveOutcome: TimedOutcome {}
extension NameserverAnswer: TimedOutcome {}

/// One query to c-ares (a resolution, a question to one nameserver): completed exactly once, by
/// c-ares' callback, its deadline or shutdown, whichever comes first; what comes later is ignored.
/// Engine thread only.
final class PendingQuery<Outcome: TimedOutcome> {
    let deadline: ContinuousClock.Instant
    /// What it ends with when its deadline passes, and when the engine stops.
    let timedOut: Outcome
    let cancelled: Outcome
    private let started = ContinuousClock.now
    private let completion: @Sendable (Outcome) -> Void
    private(set) var isFinished = false

    init(
        deadline: ContinuousClock.Instant, timedOut: Outcome, cancelled: Outcome,
        completion: @escaping @Sendable (Outcome) -> Void
    ) {
        self.deadline = deadline
        self.timedOut = timedOut
        self.cancelled = cancelled
        self.completion = completion
    }

    func finish(_ outcome: Outcome) {
        guard !isFinished else { return }
        isFinished = true
        var outcome = outcome
        outcome.duration = ContinuousClock.now - started
        completion(outcome)
    }

    /// The context c-ares carries through its callback: which query, on which channel.
    final class Call {
        let query: PendingQuery
        let channel: AresChannel
        init(query: PendingQuery, channel: AresChannel) {
            self.query = query
            self.channel = channel
        }
    }
}

/// The queries c-ares has not answered yet, for their deadlines, whatever their outcome type:
/// each is kept as its deadline and two closures, so the engine loop walks them without generic
/// code. Engine thread only.
struct PendingDeadlines {
    private struct Entry {
        let deadline: ContinuousClock.Instant
        let isFinished: () -> Bool
        let timeOut: () -> Void
        let cancel: () -> Void
    }

    private var entries: [Entry] = []

    mutating func append<Outcome>(_ query: PendingQuery<Outcome>) {
        entries.append(
            Entry(
                deadline: query.deadline, isFinished: { query.isFinished },
                timeOut: { query.finish(query.timedOut) }, cancel: { query.finish(query.cancelled) }))
    }

    /// Finishes every query whose deadline passed, then forgets the finished ones.
    mutating func expire(now: ContinuousClock.Instant) {
        guard !entries.isEmpty else { return }
        for entry in entries where !entry.isFinished() && entry.deadline <= now { entry.timeOut() }
        entries.removeAll { $0.isFinished() }
    }

    /// The earliest deadline still open.
    var earliestDeadline: ContinuousClock.Instant? {
        var earliest: ContinuousClock.Instant?
        for entry in entries where !entry.isFinished() { earliest = min(earliest ?? entry.deadline, entry.deadline) }
        return earliest
    }

    /// Finishes every open query as cancelled (the engine stops).
    mutating func cancelAll() {
        for entry in entries where !entry.isFinished() { entry.cancel() }
        entries = []
    }
}
