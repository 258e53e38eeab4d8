import Foundation
import Logging
import Reachable
import ReachableServer
import ServiceLifecycleTestKit
import Testing

@testable import ReachdApp

/// `reachd wait`'s service against this host's real monitor (no server, no probes), and the
/// lines it prints.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct ConditionWaitTests {
    private static func application() throws -> Application {
        var configuration = AppConfiguration()
        configuration.server = nil
        return try buildApplication(configuration, logger: Logger(label: "test"))
    }

    @Test func eachLineSaysTheConditionItsVerdictTheStateAndItsReason() {
        let since = Date(timeIntervalSince1970: 1_000)
        let status = ReachabilityStatus(
            path: NetworkPath(state: .reachable, ipv4: true),
            targets: [
                TargetStatus(
                    name: "db", url: "tcp://db.test:5432", state: .unreachable, reason: .timeout, since: since),
                TargetStatus(name: "api", url: "tcp://api.test:443", state: .reachable, since: since),
            ],
            connectivity: ConnectivityStatus(state: .limited, url: "http://check.test/", reason: .dns, since: since),
            dns: DNSStatus(state: .degraded, name: "db.test.", since: since),
            sequence: 1, changedAt: since)
        let conditions: [ReadinessCondition] = [
            .reachable, .target("db"), .target("api"), .target("absent"), .online, .dns, .always,
        ]
        let outcome = WaitOutcome(.timedOut, conditions: conditions, status: status)
        #expect(
            outcome.lines == [
                "reachable pass reachable",
                "target:db fail unreachable (timeout)",
                "target:api pass reachable",
                "target:absent fail unknown",
                "online fail limited (dns)",
                "dns pass degraded",
                "always pass",
            ])
        #expect(!WaitOutcome.holds(conditions, in: status))
        #expect(WaitOutcome.holds([.reachable, .dns, .always], in: status))
    }

    @Test func aConditionThatHoldsEndsTheWaitAndTheGraph() async throws {
        let application = try Self.application()
        let wait = ConditionWait(
            conditions: [.always], timeout: .seconds(30), monitor: application.monitor, logger: Logger(label: "test"))
        let started = ContinuousClock.now
        try await application.run(
            logger: Logger(label: "test"), shutdownTimeout: 3, until: wait)
        #expect(ContinuousClock.now - started < .seconds(25), "well before the 30 s timeout")
        #expect(wait.outcome?.ending == .held)
        #expect(wait.outcome?.lines == ["always pass"])
        #expect(application.monitor.isClosed, "the group shut the monitor down")
    }

    @Test func theTimeoutEndsAWaitThatCannotHoldWithItsFailingLine() async throws {
        let application = try Self.application()
        let wait = ConditionWait(
            conditions: [.always, .target("absent")], timeout: .milliseconds(300), monitor: application.monitor,
            logger: Logger(label: "test"))
        let started = ContinuousClock.now
        try await application.run(
            logger: Logger(label: "test"), shutdownTimeout: 3, until: wait)
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(300) && waited < .seconds(30), "\(waited)")
        #expect(wait.outcome?.ending == .timedOut)
        #expect(wait.outcome?.lines == ["always pass", "target:absent fail unknown"])
        #expect(application.monitor.isClosed)
    }

    @Test func gracefulShutdownInterruptsAWaitWithoutTimeout() async throws {
        let application = try Self.application()
        let wait = ConditionWait(
            conditions: [.target("absent")], timeout: nil, monitor: application.monitor, logger: Logger(label: "test"))
        try await testGracefulShutdown { trigger in
            let running = Task {
                try await application.run(
                    logger: Logger(label: "test"), shutdownTimeout: 3, until: wait)
            }
            // The wait subscribes at once; shut down once it does.
            let deadline = ContinuousClock.now + .seconds(30)
            while application.monitor.subscriberCount == 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(wait.outcome == nil, "still waiting")
            trigger.triggerGracefulShutdown()
            try await running.value
        }
        #expect(wait.outcome?.ending == .interrupted)
        #expect(wait.outcome?.lines == ["target:absent fail unknown"])
        #expect(application.monitor.isClosed)
    }
}
