import Foundation
import Probes
import Reachable
import Synchronization
import Testing

/// The orchestrators end to end in-process: a real monitor (this host's own view, read only),
/// the real engine, and servers on loopback — the route to 127.0.0.1 is the kernel's `local`
/// route via `lo`, which counts.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct ProbeSourcesTests {
    /// A server whose answer the test switches.
    final class Switch: Sendable {
        private struct State {
            var status = 204
            /// Requests still to answer with `failure` before `status` again.
            var failuresLeft = 0
            var failure = 503
        }
        private let state = Mutex(State())

        func set(status: Int) {
            state.withLock { $0.status = status }
        }

        /// Only the next `count` requests get `status`.
        func fail(next count: Int, status: Int) {
            state.withLock {
                $0.failuresLeft = count
                $0.failure = status
            }
        }

        var failuresLeft: Int { state.withLock { $0.failuresLeft } }

        /// The response to one request.
        func respond() -> String {
            let status = state.withLock { state in
                guard state.failuresLeft > 0 else { return state.status }
                state.failuresLeft -= 1
                return state.failure
            }
            return "HTTP/1.1 \(status) X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        }
    }

    static func start(
        _ specs: [String], interval: Duration = .milliseconds(200), timeout: Duration = .milliseconds(600),
        failures: Int = 3
    ) throws -> (NetworkMonitor, ProbeSources) {
        let probes = try configuration(specs, interval: interval, timeout: timeout, failures: failures)
        let monitor = try monitor(listing: probes)
        let service = try #require(try ProbeSources.make(probes, monitor: monitor))
        service.start()
        return (monitor, service)
    }

    static func configuration(
        _ specs: [String], interval: Duration = .milliseconds(200), timeout: Duration = .milliseconds(600),
        failures: Int = 3
    ) throws -> ProbeConfiguration {
        var probes = ProbeConfiguration()
        probes.targets = try TargetSpec.parseList(specs)
        probes.targetInterval = interval
        probes.targetTimeout = timeout
        probes.targetFailures = failures
        return probes
    }

    /// A monitor whose document lists the targets from the start, as `reachd` makes it.
    static func monitor(listing probes: ProbeConfiguration) throws -> NetworkMonitor {
        var configuration = MonitorConfiguration()
        configuration.initialTargets = probes.initialTargets(since: Date())
        return try NetworkMonitor(configuration: configuration)
    }

    static func waitFor(
        _ monitor: NetworkMonitor, _ what: String, timeout: Duration = .seconds(30),
        _ predicate: ([TargetStatus]) -> Bool
    ) async throws -> ReachabilityStatus {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let status = monitor.current
            if predicate(status.targets) { return status }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("timed out waiting for \(what): \(String(decoding: monitor.current.jsonBytes(), as: UTF8.self))")
        throw CancellationError()
    }

    /// Waits (bounded) until `condition` holds: a counter the code keeps, never a guessed sleep.
    static func waitUntil(_ what: String, timeout: Duration = .seconds(30), _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("timed out waiting for \(what)")
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test func everyKindOfTargetEndsInItsStateAndReason() async throws {
        let ok = try TestHTTPServer(.respond("HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n"))
        let failing = try TestHTTPServer(.respond("HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n"))
        let hanging = try TestHTTPServer(.hang)
        let closed = try ClosedPort()
        let probes = try Self.configuration([
            "web=http://127.0.0.1:\(ok.port)/health", "busy=http://127.0.0.1:\(failing.port)/",
            "slow=http://127.0.0.1:\(hanging.port)/", "db=tcp://127.0.0.1:\(closed.port)",
            "open=tcp://127.0.0.1:\(ok.port)", "self=host://127.0.0.1",
        ])
        let monitor = try Self.monitor(listing: probes)
        defer { monitor.close() }
        // Read before the service starts: from then on the engine's thread may decide `self` (a
        // route check, no transfer) before this test reads the document.
        #expect(monitor.current.targets.map(\.state) == Array(repeating: .unknown, count: 6), "listed from the start")
        let before = monitor.current
        let service = try #require(try ProbeSources.make(probes, monitor: monitor))
        service.start()
        defer { service.stop() }
        let status = try await Self.waitFor(monitor, "every target decided") { $0.allSatisfy { $0.state != .unknown } }
        let byName = Dictionary(uniqueKeysWithValues: status.targets.map { ($0.name, $0) })
        #expect(byName["web"]?.state == .reachable)
        #expect(byName["web"]?.interface == "lo")
        #expect(byName["web"]?.addresses == ["127.0.0.1"])
        #expect(byName["open"]?.state == .reachable)
        #expect(byName["self"]?.state == .reachable)
        #expect(byName["busy"]?.reason == .httpStatus)
        #expect(byName["slow"]?.reason == .timeout)
        #expect(byName["db"]?.reason == .refused)
        #expect(byName["db"]?.interface == "lo", "routed, then refused")
        #expect(status.targets.map(\.name) == ["web", "busy", "slow", "db", "open", "self"], "configuration order")
        #expect(
            status.changedAt > before.changedAt && status.stateSince == before.stateSince, "the state did not change")
    }

    @Test func steadyProbingPublishesNothing() async throws {
        let ok = try TestHTTPServer(.respond("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
        let (monitor, service) = try Self.start(["web=http://127.0.0.1:\(ok.port)/"], interval: .milliseconds(100))
        defer {
            service.stop()
            monitor.close()
        }
        let settled = try await Self.waitFor(monitor, "reachable") { $0.first?.state == .reachable }
        let probesBefore = service.statistics.probes
        try await Self.waitUntil("four more probes") { service.statistics.probes >= probesBefore + 4 }
        #expect(monitor.current.sequence == settled.sequence, "it kept probing and published nothing")
    }

    @Test func aFailingServerTurnsUnreachableOnlyAfterTheThresholdAndComesBack() async throws {
        let answer = Switch()
        let server = try TestHTTPServer { _ in .respond(answer.respond()) }
        let (monitor, service) = try Self.start(["api=http://127.0.0.1:\(server.port)/"], failures: 3)
        defer {
            service.stop()
            monitor.close()
        }
        let up = try await Self.waitFor(monitor, "reachable") { $0.first?.state == .reachable }

        // Two lost probes in a row (one fewer than the threshold): tolerated, nothing published.
        // Counted by the server, not timed by sleeping: a test task that slept longer than asked
        // (a busy machine, a sanitizer) let three probes fail and saw the target flap.
        answer.fail(next: 2, status: 503)
        let deadline = ContinuousClock.now + .seconds(30)
        while answer.failuresLeft > 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(answer.failuresLeft == 0, "both failing answers were probed")
        // Two more probes taken: the one after the failures (a success) has been recorded.
        let taken = service.statistics.probes
        try await Self.waitUntil("two more probes") { service.statistics.probes >= taken + 2 }
        #expect(monitor.current.sequence == up.sequence, "lost probes below the threshold do not flap the target")

        answer.set(status: 500)
        let down = try await Self.waitFor(monitor, "unreachable") { $0.first?.state == .unreachable }
        #expect(down.targets.first?.reason == .httpStatus)
        #expect(down.targets.first?.since != up.targets.first?.since)

        answer.set(status: 204)
        let back = try await Self.waitFor(monitor, "reachable again") { $0.first?.state == .reachable }
        #expect(back.targets.first?.reason == nil)
    }

    @Test func nothingConfiguredStartsNothing() throws {
        let monitor = try NetworkMonitor()
        defer { monitor.close() }
        #expect(try ProbeSources.make(ProbeConfiguration(), monitor: monitor) == nil)
    }
}
