/// The `route` label of `reachd_http_requests_total`: one value per `Route`, plus one for paths
/// that name nothing and one for requests refused before routing (a bad method or request line,
/// a method other than GET and HEAD, or a `Host` reachd does not answer for: 421). Never the raw path: a scanner trying a million paths
/// makes no new series.
enum RouteLabel: String, Sendable, Hashable {
    case page
    case status
    case events
    case changes
    case liveness
    case readiness
    case metrics
    case notFound = "not_found"
    case invalid
    /// A CORS preflight (`OPTIONS /status` or `/events` with `--allow-origin`).
    case preflight

    init(_ route: Route) {
        switch route {
        case .page: self = .page
        case .status: self = .status
        case .events: self = .events
        case .changes: self = .changes
        case .liveness: self = .liveness
        case .readiness: self = .readiness
        case .metrics: self = .metrics
        case .problem(let problem): self = problem.status == 404 ? .notFound : .invalid
        }
    }

    /// The status codes each route answers, whose series exist from the start.
    static let codes: [(RouteLabel, [Int])] = [
        (.page, [200]), (.status, [200]), (.events, [200]), (.changes, [200]), (.liveness, [200, 503]),
        (.readiness, [200, 503]),
        (.metrics, [200]), (.notFound, [404]), (.invalid, [400, 405, 421]), (.preflight, [204, 403]),
    ]
}
