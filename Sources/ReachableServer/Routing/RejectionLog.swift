import Logging
import Synchronization

/// Warnings for rejected requests, at most one a second: an operator learns that something is
/// sending bad requests, and a flood of them cannot flood the log.
final class RejectionLog: Sendable {
    private struct State {
        var lastLogged: ContinuousClock.Instant?
        var suppressed = 0
    }

    private let logger: Logger
    private let state = Mutex(State())
    private let interval: Duration

    init(logger: Logger, interval: Duration = .seconds(1)) {
        self.logger = logger
        self.interval = interval
    }

    func rejected(_ request: HTTPRequest, status: Int) {
        let now = ContinuousClock.now
        let suppressed = state.withLock { state -> Int? in
            if let last = state.lastLogged, now - last < interval {
                state.suppressed += 1
                return nil
            }
            state.lastLogged = now
            defer { state.suppressed = 0 }
            return state.suppressed
        }
        guard let suppressed else { return }
        logger.warning(
            "rejected request",
            metadata: [
                "status": .stringConvertible(status), "method": "\(Self.printable(request.method))",
                "path": "\(Self.printable(request.path))", "host": "\(Self.printable(request.header("Host") ?? ""))",
                "alsoRejectedSinceLastWarning": "\(suppressed)",
            ]
        )
    }

    /// Password verifications are being refused with `429` (`PasswordVerifier` says so at most
    /// once a minute): someone is guessing, or far more clients log in than usual.
    func verificationsShed() {
        logger.warning(
            "too many password verifications waiting: new credentials are answered 429 until the queue shortens",
            metadata: ["queueLimit": .stringConvertible(PasswordVerifier.queueLimit)])
    }

    /// What a client sent, safe for a log line: printable ASCII, at most 64 characters.
    static func printable(_ text: String) -> String {
        let visible = text.unicodeScalars.prefix(64).map {
            $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F ? Character($0) : "?"
        }
        return String(visible) + (text.unicodeScalars.count > 64 ? "…" : "")
    }
}
