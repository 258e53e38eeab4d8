import Dispatch
import Reachable
import Synchronization
import Testing

@testable import Probes

/// A target's regular interval counts from its run's start ("how often a target is probed"), a
/// backoff from the result: the scheduler on a real engine, with runs that take 400 ms. From the
/// run's end, 1 s became 1.4 s (an `icmp://` probe's four echoes 100 ms apart made 10 s 10.3 s).
@Suite(.timeLimit(.minutes(1)))
struct IntervalFromStartTests {
    /// Starts of the runs of one item whose runs take `runFor`; `record` says the next delay.
    func starts(
        count: Int, runFor: Duration, interval: Duration, next delay: Duration
    ) async throws -> [ContinuousClock.Instant] {
        let probes = try ProbeSourcesTests.configuration(["a=host://127.0.0.1"])
        let monitor = try ProbeSourcesTests.monitor(listing: probes)
        defer { monitor.close() }
        let engine = try ProbeEngine()
        defer { engine.stop() }
        let started = Mutex<[ContinuousClock.Instant]>([])
        let scheduler = ProbeScheduler<Int>(
            engine: engine, monitor: monitor, items: 1, timerSource: .targets, spreadInterval: interval,
            run: { item, _, completion in
                started.withLock { $0.append(.now) }
                let (seconds, attoseconds) = runFor.components
                let after = Double(seconds) + Double(attoseconds) / 1e18
                DispatchQueue.global().asyncAfter(deadline: .now() + after) { engine.perform { completion(item) } }
            },
            record: { _, _, _, _ in delay })
        scheduler.start()
        let deadline = ContinuousClock.now + .seconds(30)
        while started.withLock({ $0.count }) < count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        return started.withLock { $0 }
    }

    @Test func theIntervalCountsFromTheRunsStart() async throws {
        let times = try await starts(count: 3, runFor: .milliseconds(400), interval: .seconds(1), next: .seconds(1))
        try #require(times.count == 3)
        for (a, b) in zip(times, times.dropFirst()) {
            let gap = b - a
            #expect(gap >= .milliseconds(950) && gap < .milliseconds(1_300), "runs \(gap) apart at a 1 s interval")
        }
    }

    @Test func aBackoffCountsFromTheResult() async throws {
        let times = try await starts(
            count: 2, runFor: .milliseconds(400), interval: .seconds(1), next: .milliseconds(500))
        try #require(times.count == 2)
        let gap = times[1] - times[0]
        #expect(gap >= .milliseconds(850), "a run 400 ms long, then 500 ms: \(gap) apart")
    }
}
