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

    var calls: [Call] { recorded.withLock { $0 } }

    func suspend() {
        recorded.withLock { $0.append(.suspend) }
    }

    func resume() {
        recorded.withLock { $0.append(.resume) }
    }
}
