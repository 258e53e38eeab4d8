import Testing

@testable import ReachableServer

/// How shutdown waits for the last streams to end: until they have, or until the deadline,
/// without spinning when the waiting task is already cancelled.
struct EventHubDrainTests {
    private let hub = EventHub(initialFrame: Array("id: 0\n\n".utf8), retryMilliseconds: 2000)

    @Test func waitingForAnEmptyHubReturnsAtOnceWhenItIs() async {
        let started = ContinuousClock.now
        await hub.waitUntilEmpty(deadline: started + .seconds(60))
        #expect(ContinuousClock.now - started < .seconds(30))
    }

    @Test func waitingReturnsWhenTheLastStreamEnds() async {
        let streams = (0..<2).map { _ in hub.open(connection: RecordingConnection()) }
        let started = ContinuousClock.now
        let remover = Task { [hub] in
            for stream in streams {
                try? await Task.sleep(for: .milliseconds(50))
                hub.remove(stream)
            }
        }
        // The deadline is far: returning well before it is returning because the hub emptied,
        // however late a loaded machine (sanitizers, parallel tests) runs the remover's sleeps.
        await hub.waitUntilEmpty(deadline: started + .seconds(60))
        let waited = ContinuousClock.now - started
        #expect(hub.count == 0)
        #expect(waited >= .milliseconds(100) && waited < .seconds(30))
        await remover.value
    }

    /// Shutdown often runs in a cancelled task, where `Task.sleep` returns at once: the wait must
    /// still last until the deadline (by waiting on a signal, not by spinning).
    @Test func aCancelledWaiterStillWaitsForTheDeadline() async {
        _ = hub.open(connection: RecordingConnection())
        let waiter = Task { [hub] in
            withUnsafeCurrentTask { $0?.cancel() }
            let started = ContinuousClock.now
            await hub.waitUntilEmpty(deadline: started + .milliseconds(300))
            return (ContinuousClock.now - started, Task.isCancelled)
        }
        let (waited, wasCancelled) = await waiter.value
        #expect(wasCancelled)
        #expect(waited >= .milliseconds(300) && waited < .seconds(30))
    }

    @Test func aCancelledWaiterReturnsAsSoonAsTheHubEmpties() async {
        let stream = hub.open(connection: RecordingConnection())
        let waiter = Task { [hub] in
            withUnsafeCurrentTask { $0?.cancel() }
            let started = ContinuousClock.now
            await hub.waitUntilEmpty(deadline: started + .seconds(60))
            return ContinuousClock.now - started
        }
        try? await Task.sleep(for: .milliseconds(50))
        hub.remove(stream)
        #expect(await waiter.value < .seconds(30))
    }
}
