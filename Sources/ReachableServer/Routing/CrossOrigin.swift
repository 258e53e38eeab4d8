/// The CORS answers for `/status` and `/events` under a `CrossOriginPolicy`: the header that
/// lets an allowed origin read an answer, and the preflight (`OPTIONS`) a browser may send first.
struct CrossOrigin: Sendable {
    let policy: CrossOriginPolicy

    var isEnabled: Bool { policy != .none }

    /// Headers for every answer of a resource that varies by origin, whatever the request: with
    /// a list, caches must keep one copy per `Origin`.
    var sharedHeaders: [HTTPField] {
        switch policy {
        case .none: []
        case .any: [HTTPField("Access-Control-Allow-Origin", "*")]
        case .origins: [HTTPField("Vary", "Origin")]
        }
    }

    /// The origin to name in `Access-Control-Allow-Origin` for this request when the policy is a
    /// list and its `Origin` is on it (with `*` the shared header already says it).
    func allowedListedOrigin(of request: HTTPRequest) -> String? {
        guard case .origins(let origins) = policy, let origin = request.header("Origin"), origins.contains(origin)
        else { return nil }
        return origin
    }

    /// Headers for one answer: the shared ones, plus the request's origin when it is listed.
    func headers(for request: HTTPRequest) -> [HTTPField] {
        sharedHeaders + (allowedListedOrigin(of: request).map { [HTTPField("Access-Control-Allow-Origin", $0)] } ?? [])
    }

    /// `OPTIONS` on `/status` or `/events`: `204` with what may follow, or `403` for an origin
    /// that is not allowed (a browser then refuses the real request).
    func preflight(_ request: HTTPRequest) -> HTTPResponse {
        let allowed: String? =
            switch policy {
            case .none: nil
            case .any: "*"
            case .origins: allowedListedOrigin(of: request)
            }
        guard let allowed else { return Problem.originNotAllowed.response }
        var headers = [
            HTTPField("Access-Control-Allow-Origin", allowed),
            HTTPField("Access-Control-Allow-Methods", "GET, HEAD"),
            // EventSource sends Last-Event-ID when it reconnects; Cache-Control is set by some.
            HTTPField("Access-Control-Allow-Headers", "Last-Event-ID, Cache-Control"),
            HTTPField("Access-Control-Max-Age", "600"),
        ]
        if case .origins = policy { headers.append(HTTPField("Vary", "Origin")) }
        return HTTPResponse(status: 204, headers: headers, body: [])
    }
}
