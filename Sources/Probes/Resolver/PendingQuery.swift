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

/// The queries c-ares has not answered yet, for their deadlines. Engine thread only.
struct PendingQueries<Outcome: TimedOutcome> {
    private var queries: [PendingQuery<Outcome>] = []

    mutating func append(_ query: PendingQuery<Outcome>) {
        queries.append(query)
    }

    /// Finishes every query whose deadline passed, then forgets the finished ones.
    mutating func expire(now: ContinuousClock.Instant) {
        for query in queries where !query.isFinished && query.deadline <= now { query.finish(query.timedOut) }
        queries.removeAll { $0.isFinished }
    }

    /// The earliest deadline still open, or the channels' own next timeout if sooner.
    func nextWakeUp(now: ContinuousClock.Instant, channels: [AresChannel]) -> ContinuousClock.Instant? {
        var earliest = queries.lazy.filter { !$0.isFinished }.map(\.deadline).min()
        for channel in channels {
            if let timeout = channel.nextTimeout() { earliest = min(earliest ?? now + timeout, now + timeout) }
        }
        return earliest
    }

    /// Finishes every open query as cancelled (the engine stops).
    mutating func cancelAll() {
        for query in queries where !query.isFinished { query.finish(query.cancelled) }
        queries = []
    }
}
