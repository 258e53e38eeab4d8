import FoundationEssentials
import Reachable

/// `application/health+json` bodies (IETF draft "Health Check Response Format for HTTP APIs").
enum HealthDocument {
    /// Liveness: the process serves and its monitor still observes the kernel. Never the network,
    /// a target or connectivity: a pod must not be restarted because its uplink is down.
    static func liveness(failure: MonitorFailure?) -> (status: Int, body: [UInt8]) {
        let verdict = failure == nil ? "pass" : "fail"
        let check = HealthCheck(
            key: "netlink:monitor", componentType: "component", holds: failure == nil,
            output: failure?.description)
        return (failure == nil ? 200 : 503, document(verdict: verdict, description: nil, checks: [check]))
    }

    /// Readiness: passes when every condition of `--ready-when` holds, and never once shutdown has
    /// begun. One check per condition, in the order configured.
    static func readiness(
        status: ReachabilityStatus, conditions: [ReadinessCondition], isShuttingDown: Bool
    ) -> (status: Int, body: [UInt8]) {
        let checks = conditions.map { HealthCheck($0, status: status, isShuttingDown: isShuttingDown) }
        let ready = !isShuttingDown && checks.allSatisfy(\.holds)
        let body = document(
            verdict: ready ? "pass" : "fail", description: "ready when \(conditions.commaSeparated)", checks: checks)
        return (ready ? 200 : 503, body)
    }

    /// `{"status":…,"description":…,"checks":{KEY:[{"status":…, …}], …}}`.
    private static func document(verdict: String, description: String?, checks: [HealthCheck]) -> [UInt8] {
        let json = JSONWriter()
        json.object {
            json.field("status") { json.string(verdict) }
            if let description { json.field("description") { json.string(description) } }
            json.field("checks") {
                json.object {
                    for check in checks {
                        json.field(check.key) { json.array([check]) { $0.write(to: json) } }
                    }
                }
            }
        }
        return json.bytes
    }
}

extension HealthCheck {
    /// One entry of `checks`: `{"status":…,"componentType":…,"observedValue":…,"time":…,"output":…}`.
    fileprivate func write(to json: JSONWriter) {
        json.object {
            json.field("status") { json.string(holds ? "pass" : "fail") }
            json.field("componentType") { json.string(componentType) }
            if let observedValue { json.field("observedValue") { json.string(observedValue) } }
            if let time { json.field("time") { json.string(ReachabilityStatus.timestampStyle.format(time)) } }
            if let output { json.field("output") { json.string(output) } }
        }
    }
}
