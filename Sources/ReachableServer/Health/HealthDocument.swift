import FoundationEssentials
import Reachable

/// `application/health+json` bodies (IETF draft "Health Check Response Format for HTTP APIs").
enum HealthDocument {
    /// Liveness: the process serves and its monitor still observes the kernel.
    static func liveness(failure: MonitorFailure?) -> (status: Int, body: [UInt8]) {
        let verdict = failure == nil ? "pass" : "fail"
        let body = document(verdict: verdict, description: nil, check: "netlink:monitor") { json in
            json.field("componentType") { json.string("component") }
            if let failure { json.field("output") { json.string(failure.description) } }
        }
        return (failure == nil ? 200 : 503, body)
    }

    /// Readiness under the configured policy; always failing once shutdown has begun.
    static func readiness(
        status: ReachabilityStatus, policy: ServerConfiguration.ReadinessPolicy, isShuttingDown: Bool
    ) -> (status: Int, body: [UInt8]) {
        let ready = !isShuttingDown && (policy == .always || status.isReachable)
        let output: String? =
            isShuttingDown ? "shutting down" : (ready ? nil : "network is \(status.state.rawValue)")
        let body = document(
            verdict: ready ? "pass" : "fail", description: "ready when \(policy.rawValue)",
            check: "network:reachability"
        ) { json in
            json.field("componentType") { json.string("system") }
            json.field("observedValue") { json.string(status.state.rawValue) }
            json.field("time") { json.string(ReachabilityStatus.timestampStyle.format(status.changedAt)) }
            if let output { json.field("output") { json.string(output) } }
        }
        return (ready ? 200 : 503, body)
    }

    /// `{"status":…,"description":…,"checks":{NAME:[{"status":…, …}]}}` with one check.
    private static func document(
        verdict: String, description: String?, check name: String, details: (JSONWriter) -> Void
    ) -> [UInt8] {
        let json = JSONWriter()
        json.object {
            json.field("status") { json.string(verdict) }
            if let description { json.field("description") { json.string(description) } }
            json.field("checks") {
                json.object {
                    json.field(name) {
                        json.array([verdict]) { verdict in
                            json.object {
                                json.field("status") { json.string(verdict) }
                                details(json)
                            }
                        }
                    }
                }
            }
        }
        return json.bytes
    }
}
