import Reachable
import Synchronization
import Testing

@testable import Probes

/// With `maxRunsInFlight`, a round of more items than that waits its turn, in order, each run
/// starting only when another has ended (its timeout then counts from its own start): the
/// scheduler on a real engine, with runs that end when the test says.
@Suite(.timeLimit(.minutes(1)))
struct RunsInFlightTests {
    /// The runs started so far, in order, and the completion of each still under way.
    final class Runs: Sendable {
        let started = Mutex<[Int]>([])
        let open = Mutex<[Int: @Sendable (Int?) -> Void]>([:])

        func waitForStarted(_ count: Int) async throws {
            let deadline = ContinuousClock.now + .seconds(30)
            while started.withLock({ $0.count }) < count, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
        }
    }

    @Test func aRoundLargerThanTheLimitRunsInTurnNeverMoreAtOnce() async throws {
        let probes = try ProbeSourcesTests.configuration(["a=host://127.0.0.1"])
        let monitor = try ProbeSourcesTests.monitor(listing: probes)
        defer { monitor.close() }
        let engine = try ProbeEngine()
        let runs = Runs()
        let scheduler = ProbeScheduler<Int>(
            engine: engine, monitor: monitor, items: 5, timerSource: .targets, maxRunsInFlight: 2,
            run: { item, _, completion in
                runs.started.withLock { $0.append(item) }
                runs.open.withLock { $0[item] = completion }
            },
            record: { _, _, _, _ in .seconds(3600) })
        scheduler.start()
        try await runs.waitForStarted(2)
        try await Task.sleep(for: .milliseconds(100))
        #expect(runs.started.withLock { $0 } == [0, 1], "two at once, the rest waiting")

        for (ended, expected) in [(0, [0, 1, 2]), (1, [0, 1, 2, 3]), (2, [0, 1, 2, 3, 4])] {
            let completion = runs.open.withLock { $0.removeValue(forKey: ended) }
            engine.perform { completion?(ended) }
            try await runs.waitForStarted(expected.count)
            try await Task.sleep(for: .milliseconds(50))
            #expect(runs.started.withLock { $0 } == expected, "one ends, the next waiting one starts")
            #expect(runs.open.withLock { $0.count } == 2)
        }
        // A cancelled run (no result) makes room as well.
        let last = runs.open.withLock { $0.removeValue(forKey: 3) }
        engine.perform { last?(nil) }
        try await Task.sleep(for: .milliseconds(50))
        #expect(runs.started.withLock { $0.count } == 5, "every item ran once")
        engine.stop()
        // The completions still held retain the scheduler, which holds `runs`: let them go.
        runs.open.withLock { $0.removeAll() }
    }
}
