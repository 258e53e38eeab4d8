/// What a request asks for, decided from its method and path alone (the query string never
/// changes routing; libmicrohttpd hands the path without it).
enum Route: Equatable, Sendable {
    /// `/`: the live page.
    case page
    case status
    case events
    /// `/changes`: the last `--history` changes of the document.
    case changes
    case liveness
    case readiness
    case metrics
    case problem(Problem)

    /// The resources `--allow-origin` opens to other origins' pages.
    static func isCrossOriginReadable(_ path: String) -> Bool {
        path == "/status" || path == "/events"
    }

    /// Methods every resource here answers.
    static let allowedMethods = "GET, HEAD"

    init(_ request: HTTPRequest) {
        if let malformed = request.malformed {
            self = .problem(Problem(status: 400, title: "Bad Request", detail: malformed))
            return
        }
        self.init(method: request.method, path: request.path, version: request.version)
    }

    init(method: String, path: String, version: String = "HTTP/1.1") {
        // HTTP/1.2 to 1.9 are served as 1.1, the highest minor version implemented (RFC 9110
        // §2.5); libmicrohttpd answers other major versions itself (505).
        guard Self.isHTTP1(version) else {
            self = .problem(.badRequestLine)
            return
        }
        let resource: Route? =
            switch path {
            case "/": .page
            case "/status": .status
            case "/events": .events
            case "/changes": .changes
            case "/healthz", "/livez": .liveness
            case "/readyz": .readiness
            case "/metrics": .metrics
            default: nil
            }
        guard let resource else {
            self = .problem(.notFound)
            return
        }
        guard Self.isToken(method) else {
            self = .problem(.badMethod)
            return
        }
        guard method == "GET" || method == "HEAD" else {
            self = .problem(.methodNotAllowed)
            return
        }
        self = resource
    }

    /// `HTTP/1.0` to `HTTP/1.9`.
    static func isHTTP1(_ version: String) -> Bool {
        if version == "HTTP/1.1" || version == "HTTP/1.0" { return true }
        let bytes = version.utf8
        return bytes.count == 8 && bytes.starts(with: "HTTP/1.".utf8)
            && (48...57).contains(bytes[bytes.index(bytes.startIndex, offsetBy: 7)])
    }

    /// RFC 9110 `token`: libmicrohttpd passes any bytes up to the first space as the method.
    static func isToken(_ method: String) -> Bool {
        !method.isEmpty
            && method.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"):
                    true
                default:
                    "!#$%&'*+-.^_`|~".utf8.contains(byte)
                }
            }
    }
}
