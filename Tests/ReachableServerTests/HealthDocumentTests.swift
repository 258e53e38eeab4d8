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

    /// A document where every condition holds: reachable, connectivity full, target `db` reachable.
    private func healthy(changedAt: Date = Date(timeIntervalSince1970: 1_000)) -> ReachabilityStatus {
        ReachabilityStatus(
            path: NetworkPath(state: .reachable, ipv4: true),
            targets: [target("db", .reachable, since: Date(timeIntervalSince1970: 2_000))],
            connectivity: ConnectivityStatus(
                state: .full, url: "http://check.test/generate_204", since: Date(timeIntervalSince1970: 3_000)),
            sequence: 3, changedAt: changedAt)
    }

    private func target(
        _ name: String, _ state: TargetStatus.State, reason: ProbeFailureReason? = nil,
        since: Date = Date(timeIntervalSince1970: 2_000)
    ) -> TargetStatus {
        TargetStatus(
            name: name, url: "tcp://\(name).test:5432", state: state, reason: reason, addresses: ["198.18.1.10"],
            interface: "eth0", since: since)
    }

    private func checks(_ body: [UInt8]) throws -> [String: [[String: Any]]] {
        try #require(try json(body)["checks"] as? [String: [[String: Any]]])
    }

    private func check(_ body: [UInt8], _ key: String) throws -> [String: Any] {
        let entries = try #require(try checks(body)[key], "no check \(key)")
        #expect(entries.count == 1)
        return try #require(entries.first)
    }

    private func time(_ date: Date) -> String { ReachabilityStatus.timestampStyle.format(date) }

    @Test func readyWhenReachableFollowsTheNetwork() throws {
        let up = HealthDocument.readiness(status: status(.reachable), conditions: [.reachable], isShuttingDown: false)
        #expect(up.status == 200)
        #expect(try json(up.body)["status"] as? String == "pass")
        for state in [NetworkPath.State.unreachable, .unknown] {
            let down = HealthDocument.readiness(status: status(state), conditions: [.reachable], isShuttingDown: false)
            #expect(down.status == 503)
            #expect(try json(down.body)["status"] as? String == "fail")
        }
    }

    /// Black-box tests and operators' scripts read this entry: its shape stays as it was.
    @Test func theReachabilityCheckKeepsItsShape() throws {
        let status = healthy()
        let up = HealthDocument.readiness(status: status, conditions: [.reachable], isShuttingDown: false)
        #expect(
            String(decoding: up.body, as: UTF8.self)
                == #"{"status":"pass","description":"ready when reachable","checks":{"network:reachability":"#
                + #"[{"status":"pass","componentType":"system","observedValue":"reachable","time":"\#(time(status.changedAt))"}]}}"#
        )
    }

    @Test func readyAlwaysIgnoresTheNetwork() throws {
        let down = HealthDocument.readiness(status: status(.unreachable), conditions: [.always], isShuttingDown: false)
        #expect(down.status == 200)
        #expect(try json(down.body)["description"] as? String == "ready when always")
        let serving = try check(down.body, "reachd:serving")
        #expect(serving["status"] as? String == "pass")
        #expect(serving["componentType"] as? String == "component")
        #expect(serving["output"] == nil)
        #expect(try checks(down.body).count == 1, "no check of the network")
    }

    static let everyConditionList: [[ReadinessCondition]] = [
        [.reachable], [.always], [.online], [.target("db")], [.reachable, .always, .online, .target("db")],
    ]

    @Test(arguments: everyConditionList)
    func everyConditionPassesWhenItHolds(conditions: [ReadinessCondition]) throws {
        let answer = HealthDocument.readiness(status: healthy(), conditions: conditions, isShuttingDown: false)
        #expect(answer.status == 200)
        let body = try json(answer.body)
        #expect(body["status"] as? String == "pass")
        let checks = try checks(answer.body)
        #expect(checks.count == conditions.count, "one check per condition")
        for entry in checks.values.compactMap(\.first) {
            #expect(entry["status"] as? String == "pass")
            #expect(entry["output"] == nil)
        }
    }

    @Test(arguments: everyConditionList)
    func shutdownFailsReadinessWhateverTheConditions(conditions: [ReadinessCondition]) throws {
        let answer = HealthDocument.readiness(status: healthy(), conditions: conditions, isShuttingDown: true)
        #expect(answer.status == 503)
        let body = try json(answer.body)
        #expect(body["status"] as? String == "fail")
        let checks = try checks(answer.body)
        #expect(checks.count == conditions.count)
        for entry in checks.values.compactMap(\.first) {
            #expect(entry["status"] as? String == "fail")
            #expect(entry["output"] as? String == "shutting down")
        }
    }

    @Test func readinessFailureSaysWhatTheNetworkIs() throws {
        let answer = HealthDocument.readiness(
            status: status(.unreachable), conditions: [.reachable], isShuttingDown: false)
        let body = try json(answer.body)
        #expect(body["description"] as? String == "ready when reachable")
        let check = try check(answer.body, "network:reachability")
        #expect(check["status"] as? String == "fail")
        #expect(check["observedValue"] as? String == "unreachable")
        #expect(check["output"] as? String == "network is unreachable")
    }

    @Test func aFailingCheckNamesTheCausesLayerNeverItsWords() throws {
        var unreachable = status(.unreachable)
        unreachable.cause = Cause(layer: .link, subject: "eth0", text: "eth0 is down (no carrier)", since: Date())
        let answer = HealthDocument.readiness(status: unreachable, conditions: [.reachable], isShuttingDown: false)
        let check = try check(answer.body, "network:reachability")
        #expect(check["output"] as? String == "network is unreachable; cause: link")
        #expect(!String(decoding: answer.body, as: UTF8.self).contains("eth0"))
        // A check that holds says nothing of a cause.
        var reachable = status(.reachable)
        reachable.cause = unreachable.cause
        let ready = HealthDocument.readiness(status: reachable, conditions: [.reachable], isShuttingDown: false)
        #expect(try self.check(ready.body, "network:reachability")["output"] == nil)
    }

    @Test(arguments: ConnectivityStatus.State.allCases)
    func onlineFollowsConnectivity(state: ConnectivityStatus.State) throws {
        var status = healthy()
        let since = Date(timeIntervalSince1970: 4_000)
        let reason: ProbeFailureReason? = state == .limited ? .timeout : nil
        status.connectivity = ConnectivityStatus(
            state: state, url: state == .disabled ? nil : "http://check.test/", reason: reason, since: since)
        let answer = HealthDocument.readiness(status: status, conditions: [.online], isShuttingDown: false)
        #expect(answer.status == (state == .full ? 200 : 503))
        let check = try check(answer.body, "network:connectivity")
        #expect(check["status"] as? String == (state == .full ? "pass" : "fail"))
        #expect(check["componentType"] as? String == "system")
        #expect(check["observedValue"] as? String == state.rawValue)
        #expect(check["time"] as? String == time(since))
        let output = check["output"] as? String
        switch state {
        case .full: #expect(output == nil)
        case .limited: #expect(output == "connectivity is limited (timeout)")
        default: #expect(output == "connectivity is \(state.rawValue)")
        }
    }

    @Test(arguments: TargetStatus.State.allCases)
    func aTargetConditionFollowsThatTarget(state: TargetStatus.State) throws {
        var status = healthy()
        let since = Date(timeIntervalSince1970: 5_000)
        status.targets = [
            target("api", .unreachable, reason: .refused),
            target("db", state, reason: state == .unreachable ? .noRoute : nil, since: since),
        ]
        let answer = HealthDocument.readiness(status: status, conditions: [.target("db")], isShuttingDown: false)
        #expect(answer.status == (state == .reachable ? 200 : 503))
        #expect(try json(answer.body)["description"] as? String == "ready when target:db")
        #expect(try checks(answer.body).keys.sorted() == ["target:db"], "only the targets the conditions name")
        let check = try check(answer.body, "target:db")
        #expect(check["status"] as? String == (state == .reachable ? "pass" : "fail"))
        #expect(check["componentType"] as? String == "component")
        #expect(check["observedValue"] as? String == state.rawValue)
        #expect(check["time"] as? String == time(since))
        let output = check["output"] as? String
        switch state {
        case .reachable: #expect(output == nil)
        case .unreachable: #expect(output == "target db is unreachable (no-route)")
        case .unknown: #expect(output == "target db is unknown")
        }
    }

    @Test func aTargetNotInTheDocumentYetIsUnknown() throws {
        var status = healthy()
        status.targets = []
        let answer = HealthDocument.readiness(status: status, conditions: [.target("db")], isShuttingDown: false)
        #expect(answer.status == 503)
        let check = try check(answer.body, "target:db")
        #expect(check["status"] as? String == "fail")
        #expect(check["observedValue"] as? String == "unknown")
        #expect(check["time"] == nil, "no state, so no time it began")
        #expect(check["output"] as? String == "target db is unknown")
    }

    @Test func everyConditionMustHoldAndEachHasItsCheckInOrder() throws {
        var status = healthy()
        status.targets.append(target("api", .unreachable, reason: .timeout))
        let conditions: [ReadinessCondition] = [.reachable, .target("db"), .online, .target("api")]
        let answer = HealthDocument.readiness(status: status, conditions: conditions, isShuttingDown: false)
        #expect(answer.status == 503)
        let text = String(decoding: answer.body, as: UTF8.self)
        let body = try json(answer.body)
        #expect(body["status"] as? String == "fail")
        #expect(body["description"] as? String == "ready when reachable,target:db,online,target:api")
        let keys = ["network:reachability", "target:db", "network:connectivity", "target:api"]
        let positions = keys.compactMap { text.range(of: "\"\($0)\":")?.lowerBound }
        #expect(positions.count == keys.count && positions == positions.sorted(), "in the order configured")
        let verdicts = try checks(answer.body).mapValues { $0.first?["status"] as? String }
        #expect(
            verdicts == [
                "network:reachability": "pass", "target:db": "pass", "network:connectivity": "pass",
                "target:api": "fail",
            ])
        #expect(try check(answer.body, "target:api")["output"] as? String == "target api is unreachable (timeout)")
    }

    @Test func livenessNeverFollowsTheNetworkTargetsOrConnectivity() throws {
        // Liveness reads only the monitor's failure: nothing of the document goes in.
        let answer = HealthDocument.liveness(failure: nil)
        #expect(answer.status == 200)
        #expect(try checks(answer.body).keys.sorted() == ["netlink:monitor"])
    }

    @Test(arguments: [
        ("reachable", [ReadinessCondition.reachable]),
        ("always", [.always]),
        ("online", [.online]),
        ("target:db", [.target("db")]),
        ("reachable,target:db", [.reachable, .target("db")]),
        (" reachable , online ,", [.reachable, .online]),
        ("target:db,reachable,target:db", [.target("db"), .reachable]),
        ("target:a.b-c_D", [.target("a.b-c_D")]),
        ("online:wan1,online", [.uplinkOnline("wan1"), .online]),
    ])
    func readyWhenParsesAList(text: String, expected: [ReadinessCondition]) {
        #expect(ReadinessCondition.parseList(text) == .success(expected))
        if case .success(let conditions) = ReadinessCondition.parseList(text) {
            #expect(ReadinessCondition.parseList(conditions.commaSeparated) == .success(conditions), "round-trips")
        }
    }

    @Test(arguments: [
        ("sometimes", "sometimes"), ("reachable,sometimes", "sometimes"), ("Reachable", "Reachable"),
        ("target:", "target:"), ("target", "target"), ("online:", "online:"), ("", ""), (",", ""),
        ("reachable;online", "reachable;online"),
    ])
    func readyWhenRefusesWhatIsNoCondition(text: String, refused: String) {
        #expect(ReadinessCondition.parseList(text) == .failure(.init(text: refused)))
        if case .failure(let error) = ReadinessCondition.parseList(text) {
            #expect(error.description.contains(ReadinessCondition.syntax))
            if !refused.isEmpty { #expect(error.description.contains("\"\(refused)\"")) }
        }
    }

    /// `online:IFACE` reads that interface's own check (`--per-uplink`); an interface that is no
    /// uplink, or not there (yet), fails without being an error.
    @Test func anUplinksConditionReadsItsInterfacesCheck() throws {
        var status = ReachabilityStatus(
            path: NetworkPath(
                state: .reachable,
                interfaces: [
                    InterfaceStatus(
                        name: "wan1", index: 3, transport: .ethernet, kind: "veth", operState: "up",
                        isDefaultRoute: true, addresses: [])
                ]),
            sequence: 1, changedAt: Date())
        let since = Date(timeIntervalSince1970: 1_000)
        var check = HealthCheck(.uplinkOnline("wan1"), status: status)
        #expect(!check.holds && check.observedValue == "none" && check.output == "interface wan1 is not an uplink")
        status.interfaces[0].connectivity = ConnectivityStatus(
            state: .limited, url: "http://check.test/", reason: .timeout, since: since)
        check = HealthCheck(.uplinkOnline("wan1"), status: status)
        #expect(check.key == "online:wan1" && check.componentType == "system")
        #expect(!check.holds && check.output == "connectivity via wan1 is limited (timeout)" && check.time == since)
        status.interfaces[0].connectivity?.state = .full
        status.interfaces[0].connectivity?.reason = nil
        #expect(HealthCheck(.uplinkOnline("wan1"), status: status).holds)
        #expect(!HealthCheck(.uplinkOnline("wan0"), status: status).holds, "not there: fails")
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
