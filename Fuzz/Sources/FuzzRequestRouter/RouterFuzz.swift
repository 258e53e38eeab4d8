import FoundationEssentials
import FuzzSupport
import Logging
import Reachable

@testable import ReachableServer

/// Requests as libmicrohttpd hands them over (method, path, version, query items, headers: C
/// strings, so no NUL), routed by the real `RequestRouter` under a CORS policy, a `Host` policy
/// and `--ready-when` conditions that are themselves parsed from the input. Checks what the
/// contract promises for every request, whatever it holds.
///
/// Input: flags, then selector bytes and texts (a length byte and that many bytes) for the
/// method, path, version, `--allow-origin`, `--ready-when`, `--allowed-hosts`, query items and
/// headers. A selector picks a known value (`GET`, `/status`, `Origin`, a listed origin, an
/// allowed or a rebound `Host`) or the fuzzed text, so the fuzzer reaches every route without
/// having to guess their names.
enum RouterFuzz {
    private static let monitor = NetworkMonitor.shared
    private static let metrics = ServerMetrics(version: "fuzz")
    private static let rejections = RejectionLog(logger: Logger(label: "fuzz") { _ in SwiftLogNoOpLogHandler() })
    private static let status = sampleStatus()
    private static let hub = EventHub(
        initialFrame: EventFrame.status(status).bytes, retryMilliseconds: 2000)
    /// One snapshot per kind of policy, as the server makes one with the policy's shared headers.
    private static let snapshots = [
        StatusSnapshot(status, extraHeaders: CrossOrigin(policy: .none).sharedHeaders),
        StatusSnapshot(status, extraHeaders: CrossOrigin(policy: .any).sharedHeaders),
        StatusSnapshot(status, extraHeaders: CrossOrigin(policy: .origins(["https://dash.example"])).sharedHeaders),
    ]
    private static let listedOrigins = ["https://dash.example:8443", "http://127.0.0.1:9478"]
    private static let methods = ["GET", "HEAD", "OPTIONS", "POST", "get"]
    private static let paths = ["/status", "/events", "/", "/healthz", "/livez", "/readyz", "/metrics", "/status/"]
    private static let versions = ["HTTP/1.1", "HTTP/1.0", "HTTP/2", ""]
    private static let headerNames = ["Origin", "Last-Event-ID", "origin", "Host", "Accept", "host"]
    /// `Host` values: IP literals first (never refused), then names allowed or not by default.
    private static let ipLiterals = ["127.0.0.1:9478", "[::1]:9478", "198.18.0.2", "[2001:db8::2]", "10.0.0.1."]
    private static let hostNames = [
        "localhost", "reachd", "reachd.monitoring.svc:9478", "Node-7.Lab.Example.", "rebind.example:9478",
        "a.example.org", "::1", "",
    ]
    private static let hostName = "node-7.lab.example"

    static func run(_ input: inout FuzzInput) {
        let flags = input.byte()
        let isShuttingDown = flags & 1 != 0
        let allowOrigin = input.text()
        let readyWhen = input.text()
        let allowedHosts = input.text()
        let hostPolicy: HostPolicy
        switch (flags >> 3) & 3 {
        case 0: hostPolicy = .builtIn
        case 1: hostPolicy = (try? HostPolicy.parse(allowedHosts).get()) ?? .builtIn
        case 2: hostPolicy = .any
        default: hostPolicy = .names([HostPattern(name: "example.org", coversSubdomains: true)])
        }
        let hosts = HostCheck(policy: hostPolicy, hostName: hostName)
        let policy: CrossOriginPolicy
        switch (flags >> 1) & 3 {
        case 0: policy = .none
        case 1: policy = (try? CrossOriginPolicy.parse(allowOrigin).get()) ?? .none
        case 2: policy = .any
        default: policy = .origins(listedOrigins)
        }
        checkParsing(allowOrigin: allowOrigin, readyWhen: readyWhen)
        checkParsing(allowedHosts: allowedHosts)
        let readiness = (try? ReadinessCondition.parseList(readyWhen).get()) ?? [.reachable]

        var request = HTTPRequest(
            method: pick(&input, methods), path: pick(&input, paths), version: pick(&input, versions))
        for _ in 0..<(input.byte() % 8) {
            let name = input.text()
            request.query.append(HTTPRequest.QueryItem(name: name, value: input.bool() ? input.text() : nil))
        }
        for _ in 0..<(input.byte() % 8) {
            let name = pick(&input, headerNames)
            let value: String
            switch name.lowercased() {
            case "origin": value = pick(&input, listedOrigins)
            case "host": value = pick(&input, ipLiterals + hostNames)
            default: value = input.text()
            }
            request.headers.append(HTTPField(name, value))
        }

        let snapshot = snapshots[policy == .none ? 0 : (policy == .any ? 1 : 2)]
        let router = RequestRouter(
            monitor: monitor, snapshot: snapshot, hub: hub, readiness: readiness,
            isShuttingDown: { isShuttingDown }, rejections: rejections, crossOrigin: policy, metrics: metrics,
            hosts: hosts)
        let response = respond(router, request)
        check(response, to: request, policy: policy, snapshot: snapshot)
        checkHost(response, to: request, hosts: hosts)

        // Neither the query nor any header but Origin and Host changes the answer's status.
        var bare = request
        bare.query = []
        bare.headers = request.headers.filter { ["origin", "host"].contains($0.name.lowercased()) }
        let bareResponse = respond(router, bare)
        require(bareResponse.status == response.status, "the query or a header changed \(response.status)")
        let printable = RejectionLog.printable(request.path)
        require(
            printable.unicodeScalars.count <= 65
                && printable.unicodeScalars.dropLast(printable.hasSuffix("…") ? 1 : 0).allSatisfy {
                    $0.value >= 0x20 && $0.value < 0x7F
                },
            "the log would show \(printable.debugDescription)")
    }

    /// A known value, or (selector past them) the fuzzed text.
    private static func pick(_ input: inout FuzzInput, _ known: [String]) -> String {
        let selector = Int(input.byte())
        return selector < known.count ? known[selector] : input.text()
    }

    /// Routes, then does with a stream what the engine does once its client is gone.
    private static func respond(_ router: RequestRouter, _ request: HTTPRequest) -> HTTPResponse {
        let response = router.respond(to: request, on: NoConnection())
        if case .stream(let stream) = response.body {
            var buffer = [UInt8](repeating: 0, count: 64)
            let read = buffer.withUnsafeMutableBytes { stream.read(into: $0) }
            require(read == .wrote(64), "a new stream has less than its first frame pending: \(read)")
            require(buffer.starts(with: Array("retry: ".utf8)), "a stream starts with \(buffer)")
            stream.markDead()
            router.streamEnded(stream)
        }
        return response
    }

    private static func check(
        _ response: HTTPResponse, to request: HTTPRequest, policy: CrossOriginPolicy, snapshot: StatusSnapshot
    ) {
        let status = response.status
        require([200, 204, 400, 403, 404, 405, 421, 503].contains(status), "status \(status)")
        for field in response.headers {
            require(
                !(field.name + field.value).utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 },
                "a header line would break: \(field.name.debugDescription): \(field.value.debugDescription)")
        }
        let contentType = response.headers.value(of: "Content-Type")
        switch status {
        case 400, 403, 404, 405, 421:
            require(contentType == "application/problem+json", "\(status) as \(contentType ?? "nothing")")
            let problem = JSONValue.parse(body(of: response))
            require(problem?["status"] == .number(Double(status)), "the problem document of \(status)")
            require((status == 405) == (response.headers.value(of: "Allow") == "GET, HEAD"), "Allow on \(status)")
        case 503:
            require(contentType == "application/health+json", "503 as \(contentType ?? "nothing")")
            require(JSONValue.parse(body(of: response))?["status"] == .string("fail"), "a 503 that does not fail")
        default:
            break
        }
        if request.path == "/readyz" || request.path == "/healthz" || request.path == "/livez", status == 200 {
            require(JSONValue.parse(body(of: response))?["status"] == .string("pass"), "a 200 that does not pass")
        }
        if case .stream = response.body {
            require(
                request.method == "GET" && request.path == "/events", "a stream for \(request.method) \(request.path)")
        }

        let allowed = response.headers.filter { $0.name == "Access-Control-Allow-Origin" }.map(\.value)
        guard !allowed.isEmpty else { return }
        require(allowed.count == 1, "Access-Control-Allow-Origin \(allowed.count) times")
        require(Route.isCrossOriginReadable(request.path), "Access-Control-Allow-Origin on \(request.path)")
        switch policy {
        case .none:
            require(false, "Access-Control-Allow-Origin without --allow-origin")
        case .any:
            require(allowed == ["*"], "Access-Control-Allow-Origin \(allowed) under *")
        case .origins(let origins):
            require(
                origins.contains(allowed[0]) && request.header("Origin") == allowed[0],
                "Access-Control-Allow-Origin \(allowed[0].debugDescription) is not the request's listed origin")
        }
    }

    /// `421` exactly when the `Host` check refuses, and never for a request whose every `Host` is
    /// an IP literal or that has none; nothing else is looked at first.
    private static func checkHost(_ response: HTTPResponse, to request: HTTPRequest, hosts: HostCheck) {
        let values = request.headers.filter { $0.name.lowercased() == "host" }.map(\.value)
        require((response.status == 421) == !hosts.allows(request), "421 is \(response.status) for \(values)")
        if values.allSatisfy({ ipLiterals.contains($0) }) || hosts.policy == .any {
            require(response.status != 421, "\(values) refused under \(hosts.policy)")
        }
        if hosts.policy == .builtIn, values.contains("rebind.example:9478") {
            require(response.status == 421, "a rebound name answered \(response.status)")
        }
    }

    private static func body(of response: HTTPResponse) -> [UInt8] {
        switch response.body {
        case .bytes(let bytes): Array(bytes)
        case .shared(let shared): Array(shared.body)
        case .stream, .lengthUnknown, .later: []
        }
    }

    /// `--allow-origin` and `--ready-when` as the options parse them: what is accepted keeps
    /// its shape and reads back the same from its own description.
    private static func checkParsing(allowOrigin: String, readyWhen: String) {
        if case .success(let policy) = CrossOriginPolicy.parse(allowOrigin) {
            require(policy != .none, "\(allowOrigin.debugDescription) parsed as no policy")
            require(
                (try? CrossOriginPolicy.parse(policy.description).get()) == policy,
                "\(policy) does not read back from its description")
            if case .origins(let origins) = policy {
                for origin in origins {
                    require(
                        (origin.hasPrefix("http://") || origin.hasPrefix("https://"))
                            && origin.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ",") },
                        "accepted origin \(origin.debugDescription)")
                }
            }
        }
        if case .success(let conditions) = ReadinessCondition.parseList(readyWhen) {
            require(!conditions.isEmpty, "no condition accepted from \(readyWhen.debugDescription)")
            require(
                conditions.allSatisfy { condition in conditions.filter { $0 == condition }.count == 1 },
                "a condition twice")
            let again = try? ReadinessCondition.parseList(conditions.commaSeparated).get()
            require(again == conditions, "\(conditions) does not read back from \(conditions.commaSeparated)")
        }
    }

    /// `--allowed-hosts` as the option parses it: what is accepted reads back the same from its
    /// description, and every pattern is a lowercase name (after `*.`) with no port or trailing dot.
    private static func checkParsing(allowedHosts: String) {
        guard case .success(let policy) = HostPolicy.parse(allowedHosts) else { return }
        require(
            (try? HostPolicy.parse(policy.description).get()) == policy,
            "\(policy) does not read back from its description")
        guard case .names(let patterns) = policy else {
            require(allowedHosts.contains("*"), "\(allowedHosts.debugDescription) turned the check off")
            return
        }
        require(!patterns.isEmpty, "no pattern accepted from \(allowedHosts.debugDescription)")
        for pattern in patterns {
            require(
                !pattern.name.isEmpty && !pattern.name.hasSuffix(".") && pattern.name == pattern.name.lowercased()
                    && !pattern.name.contains(":") && !pattern.name.contains("*"),
                "accepted pattern \(pattern)")
            let example = pattern.coversSubdomains ? "a." + pattern.name : pattern.name
            require(
                HostCheck(policy: policy).allows(host: example.uppercased() + ".:80"), "\(pattern) refuses \(example)")
        }
    }

    /// A document with every kind of part: interfaces, targets in each state, connectivity.
    private static func sampleStatus() -> ReachabilityStatus {
        let since = Date(timeIntervalSince1970: 1_795_000_000)
        let path = NetworkPath(
            state: .reachable, ipv4: true, transport: TransportSet(ethernet: true),
            interfaces: [
                InterfaceStatus(
                    name: "eth0", index: 2, transport: .ethernet, kind: "veth", operState: "up", isDefaultRoute: true,
                    addresses: ["198.18.0.2/24"])
            ])
        let targets = [
            TargetStatus(name: "db", url: "tcp://db:5432", state: .reachable, addresses: ["198.18.1.10"], since: since),
            TargetStatus(name: "api", url: "https://api/health", state: .unreachable, reason: .noRoute, since: since),
            TargetStatus(name: "new", url: "host://new", since: since),
        ]
        let connectivity = ConnectivityStatus(state: .portal, url: "http://check.example/generate_204", since: since)
        return ReachabilityStatus(
            path: path, targets: targets, connectivity: connectivity, sequence: 7, changedAt: since)
    }
}

/// The connection of a stream whose client is already gone: nothing to park, wake or write.
private struct NoConnection: StreamConnection {
    func suspend() {}
    func resume() {}
    func writeNow(_ bytes: [UInt8]) -> DirectWrite { .failed }
    func clientHasLeft() -> Bool { true }
}
