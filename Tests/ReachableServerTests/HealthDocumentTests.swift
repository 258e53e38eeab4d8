import Foundation
import Reachable
import Testing

@testable import ReachableServer

struct HealthDocumentTests {
    private func status(_ state: NetworkPath.State) -> ReachabilityStatus {
        ReachabilityStatus(path: NetworkPath(state: state, ipv4: state == .reachable), sequence: 3, changedAt: Date())
    }

    private func json(_ body: [UInt8]) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
    }

    @Test func readyWhenReachableFollowsTheNetwork() throws {
        let up = HealthDocument.readiness(status: status(.reachable), policy: .reachable, isShuttingDown: false)
        #expect(up.status == 200)
        #expect(try json(up.body)["status"] as? String == "pass")
        for state in [NetworkPath.State.unreachable, .unknown] {
            let down = HealthDocument.readiness(status: status(state), policy: .reachable, isShuttingDown: false)
            #expect(down.status == 503)
            #expect(try json(down.body)["status"] as? String == "fail")
        }
    }

    @Test func readyAlwaysIgnoresTheNetwork() throws {
        let down = HealthDocument.readiness(status: status(.unreachable), policy: .always, isShuttingDown: false)
        #expect(down.status == 200)
    }

    @Test(arguments: [ServerConfiguration.ReadinessPolicy.reachable, .always])
    func shutdownFailsReadinessWhateverThePolicy(policy: ServerConfiguration.ReadinessPolicy) throws {
        let answer = HealthDocument.readiness(status: status(.reachable), policy: policy, isShuttingDown: true)
        #expect(answer.status == 503)
        let body = try json(answer.body)
        #expect(body["status"] as? String == "fail")
        let checks = try #require(body["checks"] as? [String: [[String: Any]]])
        #expect(checks["network:reachability"]?.first?["output"] as? String == "shutting down")
    }

    @Test func livenessPassesWhileTheMonitorWorks() throws {
        let answer = HealthDocument.liveness(failure: nil)
        #expect(answer.status == 200)
        let body = try json(answer.body)
        #expect(body["status"] as? String == "pass")
        let checks = try #require(body["checks"] as? [String: [[String: Any]]])
        let check = try #require(checks["netlink:monitor"]?.first)
        #expect(check["status"] as? String == "pass")
        #expect(check["componentType"] as? String == "component")
        #expect(check["output"] == nil)
    }

    @Test func readinessFailureSaysWhatTheNetworkIs() throws {
        let answer = HealthDocument.readiness(status: status(.unreachable), policy: .reachable, isShuttingDown: false)
        let body = try json(answer.body)
        #expect(body["description"] as? String == "ready when reachable")
        let checks = try #require(body["checks"] as? [String: [[String: Any]]])
        let check = try #require(checks["network:reachability"]?.first)
        #expect(check["status"] as? String == "fail")
        #expect(check["observedValue"] as? String == "unreachable")
        #expect(check["output"] as? String == "network is unreachable")
    }

    @Test func livenessFailsWithTheMonitorsReasonEscaped() throws {
        #expect(HealthDocument.liveness(failure: nil).status == 200)
        let cause = SystemError("recvfrom \"netlink\"\n\\", code: EIO)
        let failure = MonitorFailure(.connectionLost(attempts: 6), cause: cause)
        let failed = HealthDocument.liveness(failure: failure)
        #expect(failed.status == 503)
        let body = try json(failed.body)
        #expect(body["status"] as? String == "fail")
        let checks = try #require(body["checks"] as? [String: [[String: Any]]])
        let output = try #require(checks["netlink:monitor"]?.first?["output"] as? String)
        #expect(output == failure.description)
        #expect(output.contains("recvfrom \"netlink\"\n\\"), "escaped, and read back exactly")
    }
}
