public import FoundationEssentials

/// One check of a health document, and the one place a readiness condition is evaluated against
/// the status document: `/readyz` writes it as an entry of `checks`, `reachd wait` prints it as
/// a line.
public struct HealthCheck: Sendable {
    /// The key in `checks` (the draft's `componentName:measurementName`).
    public var key: String
    public var componentType: String
    /// The state the check reads, when it reads one.
    public var observedValue: String?
    /// When that state began.
    public var time: Date?
    public var holds: Bool
    /// Why the state is what it is (a target's or connectivity's `reason`, DNS's), when the
    /// document gives one; kept whether or not the check holds.
    public var reason: String?
    /// Why it fails; `nil` when it holds.
    public var output: String?

    package init(
        key: String, componentType: String, observedValue: String? = nil, time: Date? = nil, holds: Bool,
        reason: String? = nil, output: String?
    ) {
        self.key = key
        self.componentType = componentType
        self.observedValue = observedValue
        self.time = time
        self.holds = holds
        self.reason = reason
        self.output = holds ? nil : output
    }

    /// The check of one readiness condition against the document.
    ///
    /// | condition | key | componentType | observedValue | time |
    /// |---|---|---|---|---|
    /// | `reachable` | `network:reachability` | `system` | the route-based `state` | `changedAt` |
    /// | `always` | `reachd:serving` | `component` | — | — |
    /// | `online` | `network:connectivity` | `system` | connectivity `state` | its `since` |
    /// | `online:IFACE` | `online:IFACE` | `system` | that interface's connectivity `state` | its `since` |
    /// | `target:NAME` | `target:NAME` | `component` | that target's `state` | its `since` |
    /// | `dns` | `network:dns` | `system` | `dns.state` | its `since` |
    ///
    /// A failing check says why in `output` ("network is unreachable", "connectivity is limited
    /// (timeout)", "target db is unreachable (no-route)"), then the cause's layer when the
    /// document names one ("network is unreachable; cause: link"); every check fails with
    /// "shutting down" once shutdown has begun. A target the document does not list (yet) is
    /// `unknown`, without a time; an interface that does not exist (yet) or is no uplink is
    /// `none` ("interface wan1 is not an uplink").
    public init(_ condition: ReadinessCondition, status: ReachabilityStatus, isShuttingDown: Bool = false) {
        switch condition {
        case .reachable:
            self.init(
                key: "network:reachability", componentType: "system", observedValue: status.state.rawValue,
                time: status.changedAt, holds: status.isReachable, output: "network is \(status.state.rawValue)")
        case .always:
            self.init(key: "reachd:serving", componentType: "component", holds: true, output: nil)
        case .online:
            let connectivity = status.connectivity
            let reason = connectivity.reason?.rawValue
            self.init(
                key: "network:connectivity", componentType: "system",
                observedValue: connectivity.state.rawValue, time: connectivity.since,
                holds: connectivity.state == .full, reason: reason,
                output: "connectivity is \(connectivity.state.rawValue)\(Self.because(reason))")
        case .uplinkOnline(let name):
            let connectivity = status.interfaces.first { $0.name == name }?.connectivity
            let state = connectivity?.state ?? .none
            let reason = connectivity?.reason?.rawValue
            let output =
                connectivity == nil
                ? "interface \(name) is not an uplink"
                : "connectivity via \(name) is \(state.rawValue)\(Self.because(reason))"
            self.init(
                key: "online:\(name)", componentType: "system", observedValue: state.rawValue,
                time: connectivity?.since, holds: state == .full, reason: reason, output: output)
        case .target(let name):
            let target = status.targets.first { $0.name == name }
            let state = target?.state ?? .unknown
            let reason = target?.reason?.rawValue
            self.init(
                key: "target:\(name)", componentType: "component", observedValue: state.rawValue,
                time: target?.since, holds: state == .reachable, reason: reason,
                output: "target \(name) is \(state.rawValue)\(Self.because(reason))")
        case .dns:
            let dns = status.dns
            let reason = dns.reason?.rawValue
            self.init(
                key: "network:dns", componentType: "system", observedValue: dns.state.rawValue, time: dns.since,
                holds: dns.state == .ok || dns.state == .degraded, reason: reason,
                output: "dns is \(dns.state.rawValue)\(Self.because(reason))")
        }
        if isShuttingDown {
            holds = false
            output = "shutting down"
        } else if !holds, let layer = status.cause?.layer {
            // `/readyz` is open to anyone: the layer only, never the cause's words.
            output = (output.map { $0 + "; " } ?? "") + "cause: \(layer.rawValue)"
        }
    }

    private static func because(_ reason: String?) -> String {
        reason.map { " (\($0))" } ?? ""
    }
}
