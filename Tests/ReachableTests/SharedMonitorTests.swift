import Reachable
import Testing

/// The process-wide instance cannot be closed by accident.
@Suite(.timeLimit(.minutes(1))) struct SharedMonitorTests {
    @Test func closingTheSharedMonitorDoesNothing() async throws {
        let shared = NetworkMonitor.shared
        #expect(shared.failure == nil)
        #expect(shared.current.state != .unknown, "seeded before first use returns")
        let subscriber = StatusRecorder(shared.updates)
        defer { subscriber.cancel() }

        shared.close()
        shared.close()
        #expect(!shared.isClosed)

        try await subscriber.first("the current value") { _ in true }
        let late = StatusRecorder(shared.updates)
        defer { late.cancel() }
        try await late.first("a new subscriber still gets the current value") { $0 == shared.current }
        #expect(!subscriber.isFinished)
        #expect(!late.isFinished)
        #expect(shared.subscriberCount >= 2)
        #expect(NetworkMonitor.shared === shared)
    }
}
