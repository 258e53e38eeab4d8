import Reachable

/// An RFC 9457 problem document: the one error shape on the wire.
struct Problem: Sendable, Equatable {
    var status: Int
    var title: String
    var detail: String

    static let notFound = Problem(
        status: 404, title: "Not Found",
        detail: "No resource at this path. Try /, /status, /events, /changes, /metrics, /healthz, /livez or /readyz."
    )
    static let methodNotAllowed = Problem(
        status: 405, title: "Method Not Allowed", detail: "Only GET and HEAD are served."
    )
    static let originNotAllowed = Problem(
        status: 403, title: "Forbidden", detail: "This origin is not one --allow-origin lets read reachd."
    )
    static let badRequestLine = Problem(
        status: 400, title: "Bad Request", detail: "The request line is not method, path and HTTP/1.x."
    )
    static let badMethod = Problem(
        status: 400, title: "Bad Request", detail: "The request method is not a valid HTTP token."
    )
    /// A `Host` reachd is not known by (`HostCheck`): what a DNS rebinding page would send.
    static let misdirected = Problem(
        status: 421, title: "Misdirected Request",
        detail:
            "reachd does not answer for this Host (a defence against DNS rebinding). Use its IP address, localhost or a name without a dot, or allow the name with --allowed-hosts."
    )

    /// Missing or wrong credentials where `basic_auth_users` asks for them.
    static let unauthorized = Problem(
        status: 401, title: "Unauthorized",
        detail:
            "This reachd needs credentials (HTTP basic auth) on every path but /livez, /readyz and /healthz."
    )

    /// More password verifications wait than `PasswordVerifier` keeps: try again in a second.
    static let tooManyVerifications = Problem(
        status: 429, title: "Too Many Requests",
        detail:
            "Too many passwords are waiting to be verified. Retry in a second; a verified header is answered at once."
    )

    /// The challenge a `401` carries (RFC 7617, as the exporter-toolkit sends it).
    static let basicChallenge = HTTPField("WWW-Authenticate", #"Basic realm="reachd", charset="UTF-8""#)

    var json: [UInt8] {
        let json = JSONWriter()
        json.object {
            json.field("type") { json.string("about:blank") }
            json.field("title") { json.string(title) }
            json.field("status") { json.raw(String(status)) }
            json.field("detail") { json.string(detail) }
        }
        return json.bytes
    }
}

extension Problem {
    /// The problem as an answer; a 405 says which methods are allowed.
    var response: HTTPResponse {
        var headers = [HTTPField("Content-Type", "application/problem+json"), HTTPField("Cache-Control", "no-store")]
        if status == 405 { headers.append(HTTPField("Allow", Route.allowedMethods)) }
        if status == 401 { headers.append(Self.basicChallenge) }
        if status == 429 { headers.append(HTTPField("Retry-After", "1")) }
        // A request whose framing is in doubt leaves nothing reliable after it on the connection.
        if status == 400 || status == 431 { headers.append(HTTPField("Connection", "close")) }
        return HTTPResponse(status: status, headers: headers, body: json)
    }
}
