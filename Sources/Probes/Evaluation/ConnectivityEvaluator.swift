public import Reachable

/// Classifies one connectivity check the way NetworkManager and Android do. Pure.
///
/// | outcome | state |
/// |---|---|
/// | no route (decided by the caller before DNS) | `none` |
/// | DNS, timeout, refused, host unreachable, TLS, other failures, or a 4xx/5xx | `limited` with that reason |
/// | `204` | `full` (with or without an expected response: an empty 204 is the canonical check) |
/// | a 2xx whose body starts with the expected response | `full` |
/// | any other 200–399 (a redirect, a login page, a 200 without the expected body) | `portal` |
public enum ConnectivityEvaluator {
    /// The state and reason one outcome means.
    public static func classify(_ outcome: ProbeOutcome) -> (
        state: ConnectivityStatus.State, reason: ProbeFailureReason?
    ) {
        if let reason = outcome.failure {
            if reason == .noRoute { return (.none, nil) }
            return (.limited, reason)
        }
        guard let status = outcome.statusCode else { return (.limited, .error) }  // a check is always HTTP
        if status == 204 { return (.full, nil) }
        if (200...299).contains(status), outcome.bodyPrefixMatched == true { return (.full, nil) }
        if (200...399).contains(status) { return (.portal, nil) }
        return (.limited, .httpStatus)
    }
}
