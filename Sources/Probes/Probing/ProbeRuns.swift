/// The run bookkeeping of one probed item (a target, the connectivity check, a nameserver): which
/// run is the newest, how many are under way, whether one more is owed.
///
/// A network change starts a fresh run at once and makes the one under way stale (its result is
/// dropped), but never more than `maximum` runs are under way, so a storm of changes cannot pile
/// up transfers: past that, the run starts the moment one of them ends. A value type, so the rule
/// is tested without an engine.
struct ProbeRuns: Sendable, Equatable {
    /// A stale run still finishing, and the fresh one.
    static let maximum = 2

    /// The newest run asked for; only its result counts.
    private var newest: Int?
    private var inFlight = 0
    private var owed = false

    /// What to do with a finished run.
    enum Finish: Equatable {
        /// The newest run: its result counts.
        case current
        /// An older run: drop its result.
        case stale
        /// An older run, and a run is owed (it was refused while `maximum` were under way).
        case runAgain
    }

    /// A new run is wanted, numbered `generation` (unique across items, so a run of a removed item
    /// never passes for a new one). Returns whether it may start now; otherwise it is owed.
    mutating func begin(_ generation: Int) -> Bool {
        newest = generation
        guard inFlight < Self.maximum else {
            owed = true
            return false
        }
        inFlight += 1
        return true
    }

    /// No run under way.
    var isIdle: Bool { inFlight == 0 }

    /// Whether a run still under way is the newest (a part of its result may count already).
    func isNewest(_ generation: Int) -> Bool {
        generation == newest
    }

    /// A run ended.
    mutating func finish(_ generation: Int) -> Finish {
        inFlight -= 1
        if generation == newest { return .current }
        if owed {
            owed = false
            return .runAgain
        }
        return .stale
    }
}
