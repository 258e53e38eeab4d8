/// One condition of `--ready-when` (a comma-separated list; `/readyz` passes when all hold).
public enum ReadinessCondition: Sendable, Equatable, CustomStringConvertible {
    /// The network is reachable (the route-based `state`): the default.
    case reachable
    /// Whenever reachd serves: its own readiness, not the network's.
    case always
    /// Connectivity is `full`.
    case online
    /// That target is `reachable`.
    case target(String)

    /// As written on the command line.
    public var description: String {
        switch self {
        case .reachable: "reachable"
        case .always: "always"
        case .online: "online"
        case .target(let name): "target:\(name)"
        }
    }
}
