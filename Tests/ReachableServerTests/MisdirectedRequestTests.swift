import Foundation
import Logging
import Reachable
import Testing

@testable import ReachableServer

/// The router under the `Host` check: a name reachd is not known by gets `421` on every path and
/// method, before routing, CORS or a stream; it is counted and logged like other refusals.
struct MisdirectedRequestTests {
    private let status = ReachabilityStatus(
        path: NetworkPath(state: .reachable, ipv4: true), sequence: 3, changedAt: Date())
    private let metrics = ServerMetrics()

    private func router(_ hosts: HostCheck = HostCheck(), crossOrigin: CrossOriginPolicy = .any) -> (
        RequestRouter, EventHub
    ) {
        let snapshot = StatusSnapshot(status, extraHeaders: CrossOrigin(policy: crossOrigin).sharedHeaders)
        let hub = EventHub(initialFrame: EventFrame.status(status).bytes, retryMilliseconds: 2000)
        let router = RequestRouter(
            monitor: NetworkMonitor.shared, snapshot: snapshot, hub: hub, readiness: [.always],
            isShuttingDown: { false },
            rejections: RejectionLog(logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }),
            crossOrigin: crossOrigin, metrics: metrics, hosts: hosts)
        return (router, hub)
    }

    private func request(_ method: String, _ path: String, host: String?) -> HTTPRequest {
        var headers = [HTTPField("Origin", "http://rebind.example:9478")]
        if let host { headers.append(HTTPField("Host", host)) }
        if method == "OPTIONS" { headers.append(HTTPField("Access-Control-Request-Method", "GET")) }
        return HTTPRequest(method: method, path: path, version: "HTTP/1.1", headers: headers)
    }

    static let paths = ["/", "/status", "/events", "/healthz", "/livez", "/readyz", "/metrics", "/nothing-here"]

    @Test(arguments: ["GET", "HEAD", "OPTIONS", "POST"], paths)
    func aNameNotAllowedIsMisdirectedEverywhere(method: String, path: String) throws {
        let (router, hub) = router()
        let response = router.respond(to: request(method, path, host: "rebind.example:9478"), on: RecordingConnection())
        #expect(response.status == 421)
        #expect(response.header("Content-Type") == "application/problem+json")
        #expect(response.header("Access-Control-Allow-Origin") == nil, "even under --allow-origin '*'")
        let problem = try #require(
            try JSONSerialization.jsonObject(with: Data(response.bodyBytes ?? [])) as? [String: Any])
        #expect(problem["status"] as? Int == 421)
        #expect(problem["title"] as? String == "Misdirected Request")
        #expect((problem["detail"] as? String)?.contains("--allowed-hosts") == true)
        #expect(hub.count == 0, "no stream is opened")
    }

    @Test(arguments: paths.dropLast())
    func anAllowedNameOrNoHostIsServed(path: String) {
        let (router, hub) = router()
        for host in ["127.0.0.1:9478", "[::1]:9478", "reachd.monitoring.svc", nil] {
            let response = router.respond(to: request("GET", path, host: host), on: RecordingConnection())
            #expect(response.status == 200, "\(host ?? "no Host") on \(path)")
            if let stream = response.stream {
                stream.markDead()
                router.streamEnded(stream)
            }
        }
        #expect(hub.count == 0)
    }

    @Test func allowedHostsAddsANameAndStarServesAny() {
        let listed = router(HostCheck(policy: .names([HostPattern(name: "example.org", coversSubdomains: true)])))
        #expect(
            listed.0.respond(to: request("GET", "/status", host: "r.example.org"), on: RecordingConnection()).status
                == 200)
        #expect(
            listed.0.respond(to: request("GET", "/status", host: "rebind.example"), on: RecordingConnection()).status
                == 421)
        let off = router(HostCheck(policy: .any))
        #expect(
            off.0.respond(to: request("GET", "/status", host: "rebind.example"), on: RecordingConnection()).status
                == 200)
    }

    @Test func misdirectedRequestsAreCountedAsInvalid() {
        let (router, _) = router()
        for path in ["/status", "/metrics", "/nope"] {
            _ = router.respond(to: request("GET", path, host: "rebind.example"), on: RecordingConnection())
        }
        let text = String(decoding: metrics.render(sseClients: 0), as: UTF8.self)
        #expect(text.contains("reachd_http_requests_total{route=\"invalid\",code=\"421\"} 3"), "\(text)")
        #expect(text.contains("reachd_http_requests_total{route=\"not_found\",code=\"404\"} 0"))
    }
}
