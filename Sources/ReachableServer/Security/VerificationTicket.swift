import Synchronization

/// A suspended request's claim on a verification (`PasswordVerifier`): settled once, by the
/// verifier's thread, and then the one waiting is woken.
///
/// The request's connection is suspended before the daemon asks to be woken (`whenSettled`), and
/// woken exactly once after: a verification that ends first wakes it as soon as it asks.
final class VerificationTicket: Sendable {
    enum Outcome: Sendable, Equatable {
        case allowed
        case refused
        /// Not verified: too many were waiting, or the server is stopping.
        case shed
    }

    private struct State {
        var outcome: Outcome?
        var wake: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

    /// The outcome, once settled.
    var outcome: Outcome? { state.withLock { $0.outcome } }

    /// Calls `wake` once the ticket is settled: at once if it already is.
    func whenSettled(_ wake: @escaping @Sendable () -> Void) {
        let settled = state.withLock { state -> Bool in
            if state.outcome != nil { return true }
            state.wake = wake
            return false
        }
        if settled { wake() }
    }

    /// The first outcome counts; `wake` runs outside the lock.
    func settle(_ outcome: Outcome) {
        let wake = state.withLock { state -> (@Sendable () -> Void)? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { state.wake = nil }
            return state.wake
        }
        wake?()
    }
}
