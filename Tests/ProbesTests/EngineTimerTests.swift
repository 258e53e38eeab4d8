import Probes
import Synchronization
import Testing

/// The engine's timers (`ProbeEngine.schedule`): one pending per key, run in deadline order on
/// the engine thread, each calling its source's handler (`onTimer(of:)`) with its item. The loop keeps its timers in a heap whose replaced entries stay until their
/// time instead of scanning every timer on each wake-up, so these pin what that must not change:
/// a timer replaced by a later one, or added before the earliest, still runs exactly at its own time.
@Suite(.timeLimit(.minutes(1)))
struct EngineTimerTests {
    let engine: ProbeEngine

    init() throws {
        engine = try ProbeEngine(resolver: ResolverConfiguration(resolvConfPath: "/nonexistent/resolv.conf"))
    }

    /// What ran, in order, and when.
    final class Ran: Sendable {
        private let entries = Mutex<[(name: String, at: ContinuousClock.Instant)]>([])
        func record(_ name: String) { entries.withLock { $0.append((name, .now)) } }
        var names: [String] { entries.withLock { $0.map(\.name) } }
        func time(of name: String) -> ContinuousClock.Instant? { entries.withLock { $0.first { $0.name == name }?.at } }
    }

    /// Records each timer of `source` as it fires, by its item's name in `names`.
    func handle(_ source: EngineTimerKey.Source, in ran: Ran, names: [Int: String]) {
        engine.onTimer(of: source) { item in ran.record(names[item] ?? "\(source) \(item)") }
    }

    /// Waits for `count` entries (the timers' own times plus a generous margin for a loaded CI).
    func wait(for count: Int, in ran: Ran) async throws {
        let deadline = ContinuousClock.now + .seconds(40)
        while ran.names.count < count, .now < deadline { try await Task.sleep(for: .milliseconds(5)) }
    }

    @Test func timersRunInDeadlineOrderNotSubmissionOrder() async throws {
        let ran = Ran()
        handle(.targets, in: ran, names: [1: "c", 2: "a", 3: "b"])
        let start = ContinuousClock.now
        for (key, milliseconds) in [(1, 240), (2, 40), (3, 120)] {
            engine.schedule(key: EngineTimerKey(.targets, item: key), at: start + .milliseconds(milliseconds))
        }
        try await wait(for: 3, in: ran)
        #expect(ran.names == ["a", "b", "c"])
        #expect(try #require(ran.time(of: "a")) >= start + .milliseconds(40))
    }

    @Test func aTimerAddedBeforeTheEarliestRunsAtItsOwnTime() async throws {
        let ran = Ran()
        handle(.targets, in: ran, names: [1: "late", 2: "early"])
        let start = ContinuousClock.now
        engine.schedule(key: EngineTimerKey(.targets, item: 1), at: start + .seconds(45))
        try await Task.sleep(for: .milliseconds(50))  // the loop now sleeps towards the late one
        engine.schedule(key: EngineTimerKey(.targets, item: 2), at: start + .milliseconds(150))
        try await wait(for: 1, in: ran)
        #expect(ran.names == ["early"])
        let early = try #require(ran.time(of: "early"))
        #expect(early >= start + .milliseconds(150) && early < start + .seconds(40), "the early one was not held back")
    }

    @Test func aTimerReplacedByALaterOneRunsOnceAtTheLaterTime() async throws {
        let ran = Ran()
        handle(.targets, in: ran, names: [7: "seven", 8: "after"])
        let start = ContinuousClock.now
        engine.schedule(key: EngineTimerKey(.targets, item: 7), at: start + .milliseconds(60))
        engine.schedule(key: EngineTimerKey(.targets, item: 7), at: start + .milliseconds(300))
        engine.schedule(key: EngineTimerKey(.targets, item: 8), at: start + .milliseconds(500))
        try await wait(for: 2, in: ran)
        #expect(ran.names == ["seven", "after"], "the replaced timer never runs")
        #expect(try #require(ran.time(of: "seven")) >= start + .milliseconds(300))
    }

    @Test func aTimerReplacedByAnEarlierOneRunsAtTheEarlierTime() async throws {
        let ran = Ran()
        handle(.targets, in: ran, names: [3: "three"])
        let start = ContinuousClock.now
        engine.schedule(key: EngineTimerKey(.targets, item: 3), at: start + .seconds(45))
        engine.schedule(key: EngineTimerKey(.targets, item: 3), at: start + .milliseconds(80))
        try await wait(for: 1, in: ran)
        let replacement = try #require(ran.time(of: "three"))
        #expect(replacement >= start + .milliseconds(80) && replacement < start + .seconds(40), "not held to the first")
        try await Task.sleep(for: .milliseconds(100))
        #expect(ran.names == ["three"])
    }

    @Test func aTimerCanScheduleTheNextOne() async throws {
        let ran = Ran()
        let engine = self.engine
        let steps = Mutex(0)
        engine.onTimer(of: .targets) { item in
            let step = steps.withLock {
                $0 += 1
                return $0
            }
            ran.record("step \(step) of \(item)")
            guard step < 5 else { return }
            engine.schedule(key: EngineTimerKey(.targets, item: item), at: .now + .milliseconds(10))
        }
        engine.schedule(key: EngineTimerKey(.targets, item: 42), at: .now + .milliseconds(10))
        try await wait(for: 5, in: ran)
        #expect(ran.names == (1...5).map { "step \($0) of 42" })
    }

    @Test func aLaterHandlerReplacesTheSourcesLastOne() async throws {
        let ran = Ran()
        handle(.targets, in: ran, names: [1: "old handler"])
        handle(.targets, in: ran, names: [1: "new handler"])
        engine.schedule(key: EngineTimerKey(.targets, item: 1), at: .now + .milliseconds(20))
        try await wait(for: 1, in: ran)
        try await Task.sleep(for: .milliseconds(50))
        #expect(ran.names == ["new handler"])
    }

    @Test func sourcesNumberTheirItemsApartAndOneShotTimersAreNeverReplaced() async throws {
        let ran = Ran()
        handle(.targets, in: ran, names: [0: "target 0"])
        handle(.connectivity, in: ran, names: [0: "connectivity 0"])
        let start = ContinuousClock.now
        engine.schedule(key: EngineTimerKey(.targets, item: 0), at: start + .milliseconds(40))
        engine.schedule(key: EngineTimerKey(.connectivity, item: 0), at: start + .milliseconds(120))
        engine.after(start + .milliseconds(70)) { ran.record("one-shot a") }
        engine.after(start + .milliseconds(90)) { ran.record("one-shot b") }
        try await wait(for: 4, in: ran)
        #expect(ran.names == ["target 0", "one-shot a", "one-shot b", "connectivity 0"])
    }
}
