import FoundationEssentials
import Reachable

/// `application/health+json` bodies (IETF draft "Health Check Response Format for HTTP APIs").
enum HealthDocument {
    /// Liveness: the process serves and its monitor still observes the kernel.
    static func liveness(failure: String?) -> (status: Int, body: [UInt8]) {
        let verdict = failure == nil ? "pass" : "fail"
        var check = "{\"status\":\"\(verdict)\",\"componentType\":\"component\""
        if let failure { check += ",\"output\":\(quoted(failure))" }
        check += "}"
        let body = "{\"status\":\"\(verdict)\",\"checks\":{\"netlink:monitor\":[\(check)]}}"
        return (failure == nil ? 200 : 503, Array(body.utf8))
    }

    /// Readiness under the configured policy; always failing once shutdown has begun.
    static func readiness(
        status: ReachabilityStatus, policy: ServerConfiguration.ReadinessPolicy, isShuttingDown: Bool
    ) -> (status: Int, body: [UInt8]) {
        let ready = !isShuttingDown && (policy == .always || status.isReachable)
        let verdict = ready ? "pass" : "fail"
        var check = "{\"status\":\"\(verdict)\",\"componentType\":\"system\""
        check += ",\"observedValue\":\"\(status.state.rawValue)\""
        check += ",\"time\":\"\(ReachabilityStatus.timestampStyle.format(status.changedAt))\""
        if isShuttingDown {
            check += ",\"output\":\"shutting down\""
        } else if !ready {
            check += ",\"output\":\"network is \(status.state.rawValue)\""
        }
        check += "}"
        let body =
            "{\"status\":\"\(verdict)\",\"description\":\"ready when \(policy.rawValue)\","
            + "\"checks\":{\"network:reachability\":[\(check)]}}"
        return (ready ? 200 : 503, Array(body.utf8))
    }

    /// A JSON string literal for arbitrary text (failure reasons come from strerror and the like).
    private static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20:
                out +=
                    "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
