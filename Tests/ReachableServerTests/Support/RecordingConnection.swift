import Synchronization

@testable import ReachableServer

/// Stands in for libmicrohttpd's connection: records every suspend and resume, in order, so a
/// test can check the rules the real engine depends on.
final class RecordingConnection: StreamConnection {
    enum Call: Equatable {
        case suspend
        case resume
    }

    private let recorded = Mutex<[Call]>([])
    private let left = Mutex(false)

    /// Makes `clientHasLeft()` true from now on, as when the client's FIN arrives.
    func clientLeaves() {
        left.withLock { $0 = true }
    }

    var calls: [Call] { recorded.withLock { $0 } }

    func suspend() {
        recorded.withLock { $0.append(.suspend) }
    }

    func resume() {
        recorded.withLock { $0.append(.resume) }
    }

    func clientHasLeft() -> Bool {
        left.withLock { $0 }
    }
}
