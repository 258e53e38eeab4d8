import Synchronization

@testable import ReachableServer

/// Stands in for libmicrohttpd's connection: records every suspend, resume and direct write,
/// in order, so a test can check the rules the real engine depends on. Direct writes answer
/// `directWrites` (by default `.notNow`: every frame goes through `read`).
final class RecordingConnection: StreamConnection {
    enum Call: Equatable {
        case suspend
        case resume
    }

    private let recorded = Mutex<[Call]>([])
    private let directWrites = Mutex<[(text: String, result: DirectWrite)]>([])
    private let outcome: Mutex<DirectWrite>
    private let left = Mutex(false)

    /// Makes `clientHasLeft()` true from now on, as when the client's FIN arrives.
    func clientLeaves() {
        left.withLock { $0 = true }
    }

    init(directWrites: DirectWrite = .notNow) {
        outcome = Mutex(directWrites)
    }

    /// What the next direct writes answer.
    func answerDirectWrites(with result: DirectWrite) {
        outcome.withLock { $0 = result }
    }

    func writeNow(_ bytes: [UInt8]) -> DirectWrite {
        let result = outcome.withLock { $0 }
        directWrites.withLock { $0.append((String(decoding: bytes, as: UTF8.self), result)) }
        return result
    }

    /// Suspensions and resumptions, in order.
    var calls: [Call] { recorded.withLock { $0 } }

    /// Every direct write tried: the text and what it answered.
    var writes: [(text: String, result: DirectWrite)] { directWrites.withLock { $0 } }

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
