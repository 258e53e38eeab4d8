import Reachable

/// Turns each request into a response. Runs on the engine's threads: never waits on an actor,
/// never encodes the status (the snapshot holds it encoded).
final class RequestRouter: HTTPHandler {
    private let monitor: NetworkMonitor
    private let snapshot: StatusSnapshot
    private let hub: EventHub
    private let changes: ChangeHistory
    private let readiness: [ReadinessCondition]
    private let isShuttingDown: @Sendable () -> Bool
    private let rejections: RejectionLog
    private let crossOrigin: CrossOrigin
    private let metrics: ServerMetrics
    private let hosts: HostCheck
    private let security: WebSecurity?
    /// Where passwords not seen before are verified, one at a time, off the request threads.
    let verifier: PasswordVerifier

    /// - Parameters:
    ///   - changes: what `/changes` answers; by default one that never records (tests of other routes).
    ///   - readiness: the conditions of `--ready-when`; `/readyz` passes when all hold.
    ///   - isShuttingDown: whether graceful shutdown has begun (`/readyz` fails from then on).
    ///   - hosts: which `Host` values are answered; the others get `421` on every path.
    ///   - security: the web config; with `basic_auth_users`, every path but the health ones
    ///     needs credentials.
    init(
        monitor: NetworkMonitor, snapshot: StatusSnapshot, hub: EventHub,
        changes: ChangeHistory? = nil,
        readiness: [ReadinessCondition], isShuttingDown: @escaping @Sendable () -> Bool,
        rejections: RejectionLog, crossOrigin: CrossOriginPolicy = .none, metrics: ServerMetrics = ServerMetrics(),
        hosts: HostCheck = HostCheck(), security: WebSecurity? = nil
    ) {
        self.security = security
        self.crossOrigin = CrossOrigin(policy: crossOrigin)
        self.monitor = monitor
        self.snapshot = snapshot
        self.hub = hub
        self.changes = changes ?? ChangeHistory(capacity: 1, baseline: snapshot.status)
        self.readiness = readiness
        self.isShuttingDown = isShuttingDown
        self.rejections = rejections
        verifier = PasswordVerifier(shedding: { rejections.verificationsShed() })
        self.metrics = metrics
        self.hosts = hosts
    }

    func respond(to request: HTTPRequest, on connection: any StreamConnection) -> HTTPResponse {
        // A request framed wrongly is not looked at further: which request it is, is in doubt.
        if request.malformed != nil {
            let route = Route(request)
            metrics.countRequest(route, status: 400)
            return answer(route, request, on: connection)
        }
        // First, before any path or method is looked at: a rebound page learns nothing.
        guard hosts.allows(request) else {
            let route = Route.problem(.misdirected)
            rejections.rejected(request, status: Problem.misdirected.status)
            metrics.countRequest(route, status: Problem.misdirected.status)
            return Problem.misdirected.response
        }
        // Then credentials, before anything else is looked at (a preflight and a 404 included):
        // without them nothing but health is answered. The health endpoints stay open for the
        // kubelet, whose probes carry no secret.
        if let auth = security?.auth, !Self.isHealth(request.path) {
            switch auth.check(request.header("Authorization"), verifier: verifier) {
            case .allowed: break
            case .refused: return refuse(request, .unauthorized)
            case .shed: return refuse(request, .tooManyVerifications)
            case .pending(let ticket):
                return HTTPResponse(
                    later: AfterVerification(ticket: ticket, request: request, connection: connection, router: self))
            }
        }
        return respondAuthorized(to: request, on: connection)
    }

    /// A request turned away before its path is looked at (wrong credentials, too many guesses).
    func refuse(_ request: HTTPRequest, _ problem: Problem) -> HTTPResponse {
        rejections.rejected(request, status: problem.status)
        metrics.countRequest(Route(request), status: problem.status)
        return problem.response
    }

    /// The answer once the credentials, if any are needed, were found good.
    func respondAuthorized(to request: HTTPRequest, on connection: any StreamConnection) -> HTTPResponse {
        if crossOrigin.isEnabled, request.method == "OPTIONS", Route.isCrossOriginReadable(request.path) {
            let response = crossOrigin.preflight(request)
            metrics.countPreflight(status: response.status)
            return response
        }
        let route = Route(request)
        let response = answer(route, request, on: connection)
        metrics.countRequest(route, status: response.status)
        return response
    }

    private func answer(_ route: Route, _ request: HTTPRequest, on connection: any StreamConnection) -> HTTPResponse {
        switch route {
        case .page:
            return HTTPResponse(status: 200, shared: Page.response)
        case .status:
            if let origin = crossOrigin.allowedListedOrigin(of: request) {
                // A listed origin is named in the answer, so this one answer has headers of its own.
                let headers =
                    StatusSnapshot.headers + snapshot.extraHeaders
                    + [HTTPField("Access-Control-Allow-Origin", origin)]
                return HTTPResponse(status: 200, headers: headers, body: snapshot.json)  // libmicrohttpd drops it for HEAD
            }
            return HTTPResponse(status: 200, shared: snapshot.response)
        case .changes:
            // Rendered when the change was recorded: a request copies nothing.
            return HTTPResponse(status: 200, shared: changes.response)
        case .events where request.method == "HEAD":
            // The stream's headers without its body, and without a length the GET's body never
            // has: not chunked (libmicrohttpd 0.9.75 would still send the final chunk to HEAD).
            return HTTPResponse(
                status: 200, headers: Self.eventStreamHeaders + crossOrigin.headers(for: request), lengthUnknown: ())
        case .events:
            // `Last-Event-ID` and `?last_event_id=` are accepted and need nothing: status is
            // state, so every stream starts with the current document.
            metrics.eventsSent(1)
            return HTTPResponse(
                status: 200, headers: Self.eventStreamHeaders + crossOrigin.headers(for: request),
                stream: hub.open(connection: connection))
        case .liveness:
            let (status, body) = HealthDocument.liveness(failure: monitor.failure)
            return HTTPResponse(status: status, headers: Self.healthHeaders, body: body)
        case .readiness:
            let (status, body) = HealthDocument.readiness(
                status: snapshot.status, conditions: readiness, isShuttingDown: isShuttingDown()
            )
            return HTTPResponse(status: status, headers: Self.healthHeaders, body: body)
        case .metrics:
            // Rendered from values set when they changed: a scrape computes nothing, unless the
            // document `/status` serves now has not been applied to them yet.
            return metrics.response(sseClients: hub.count, current: snapshot.status)
        case .problem(let problem):
            rejections.rejected(request, status: problem.status)
            return problem.response
        }
    }

    /// The paths open without credentials.
    static func isHealth(_ path: String) -> Bool {
        path == "/livez" || path == "/readyz" || path == "/healthz"
    }

    func streamEnded(_ stream: any BodyStream) {
        hub.remove(stream)
    }

    /// `X-Accel-Buffering: no` keeps nginx from buffering the stream.
    static let eventStreamHeaders = [
        HTTPField("Content-Type", "text/event-stream"), HTTPField("Cache-Control", "no-cache"),
        HTTPField("X-Accel-Buffering", "no"),
    ]

    static let healthHeaders = [
        HTTPField("Content-Type", "application/health+json"), HTTPField("Cache-Control", "no-store"),
    ]
}
