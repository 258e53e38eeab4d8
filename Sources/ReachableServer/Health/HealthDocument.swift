import FoundationEssentials
import Reachable

/// `application/health+json` bodies (IETF draft "Health Check Response Format for HTTP APIs").
enum HealthDocument {
    /// Liveness: the process serves and its monitor still observes the kernel. Never the network,
    /// a target or connectivity: a pod must not be restarted because its uplink is down.
    static func liveness(failure: MonitorFailure?) -> (status: Int, body: [UInt8]) {
        let verdict = failure == nil ? "pass" : "fail"
        let check = Check(
            key: "netlink:monitor", componentType: "component", holds: failure == nil,
            output: failure?.description)
        return (failure == nil ? 200 : 503, document(verdict: verdict, description: nil, checks: [check]))
    }

    /// Readiness: passes when every condition of `--ready-when` holds, and never once shutdown has
    /// begun. One check per condition, in the order configured.
    static func readiness(
        status: ReachabilityStatus, conditions: [ReadinessCondition], isShuttingDown: Bool
    ) -> (status: Int, body: [UInt8]) {
        let checks = conditions.map { Check($0, status: status, isShuttingDown: isShuttingDown) }
        let ready = !isShuttingDown && checks.allSatisfy(\.holds)
        let body = document(
            verdict: ready ? "pass" : "fail", description: "ready when \(conditions.commaSeparated)", checks: checks)
        return (ready ? 200 : 503, body)
    }

    /// One entry of `checks`: `"KEY":[{"status":…,"componentType":…,"observedValue":…,"time":…,"output":…}]`.
    struct Check {
        /// The key in `checks` (the draft's `componentName:measurementName`).
        var key: String
        var componentType: String
        /// The state the check reads, when it reads one.
        var observedValue: String?
        /// When that state began.
        var time: Date?
        var holds: Bool
        /// Why it fails; `nil` when it holds.
        var output: String?

        init(
            key: String, componentType: String, observedValue: String? = nil, time: Date? = nil, holds: Bool,
            output: String?
        ) {
            self.key = key
            self.componentType = componentType
            self.observedValue = observedValue
            self.time = time
            self.holds = holds
            self.output = holds ? nil : output
        }

        /// The check of one readiness condition against the document.
        ///
        /// | condition | key | componentType | observedValue | time |
        /// |---|---|---|---|---|
        /// | `reachable` | `network:reachability` | `system` | the route-based `state` | `changedAt` |
        /// | `always` | `reachd:serving` | `component` | — | — |
        /// | `online` | `network:connectivity` | `system` | connectivity `state` | its `since` |
        /// | `target:NAME` | `target:NAME` | `component` | that target's `state` | its `since` |
        /// | `dns` | `network:dns` | `system` | `dns.state` | its `since` |
        ///
        /// A failing check says why in `output` ("network is unreachable", "connectivity is limited
        /// (timeout)", "target db is unreachable (no-route)"); every check fails with
        /// "shutting down" once shutdown has begun. A target the document does not list (yet) is
        /// `unknown`, without a time.
        init(_ condition: ReadinessCondition, status: ReachabilityStatus, isShuttingDown: Bool) {
            switch condition {
            case .reachable:
                self.init(
                    key: "network:reachability", componentType: "system", observedValue: status.state.rawValue,
                    time: status.changedAt, holds: status.isReachable, output: "network is \(status.state.rawValue)")
            case .always:
                self.init(key: "reachd:serving", componentType: "component", holds: true, output: nil)
            case .online:
                let connectivity = status.connectivity
                self.init(
                    key: "network:connectivity", componentType: "system",
                    observedValue: connectivity.state.rawValue, time: connectivity.since,
                    holds: connectivity.state == .full,
                    output: "connectivity is \(connectivity.state.rawValue)\(Self.because(connectivity.reason))")
            case .target(let name):
                let target = status.targets.first { $0.name == name }
                let state = target?.state ?? .unknown
                self.init(
                    key: "target:\(name)", componentType: "component", observedValue: state.rawValue,
                    time: target?.since, holds: state == .reachable,
                    output: "target \(name) is \(state.rawValue)\(Self.because(target?.reason))")
            case .dns:
                let dns = status.dns
                self.init(
                    key: "network:dns", componentType: "system", observedValue: dns.state.rawValue, time: dns.since,
                    holds: dns.state == .ok || dns.state == .degraded,
                    output: "dns is \(dns.state.rawValue)\(dns.reason.map { " (\($0.rawValue))" } ?? "")")
            }
            if isShuttingDown {
                holds = false
                output = "shutting down"
            }
        }

        private static func because(_ reason: ProbeFailureReason?) -> String {
            reason.map { " (\($0.rawValue))" } ?? ""
        }

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

    /// `{"status":…,"description":…,"checks":{KEY:[{"status":…, …}], …}}`.
    private static func document(verdict: String, description: String?, checks: [Check]) -> [UInt8] {
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
