import Synchronization

/// Wakes one waiter, once: whichever of several events fires first wins, later fires do nothing.
/// A fire that comes before the wait is not lost.
final class OneShotSignal: Sendable {
    private struct State {
        var hasFired = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    /// Returns once `fire()` has been called (at once if it already was). Ignores cancellation:
    /// whoever waits decides what fires it.
    func wait() async {
        await withCheckedContinuation { continuation in
            let hasFired = state.withLock { state in
                if !state.hasFired { state.waiter = continuation }
                return state.hasFired
            }
            if hasFired { continuation.resume() }
        }
    }

    func fire() {
        let waiter = state.withLock { state in
            state.hasFired = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }
}
