import Foundation
import Logging
import Reachable
import Testing

@testable import ReachableServer

/// `--allow-origin`: parsing, the headers on `/status` and `/events`, and the preflight.
struct CrossOriginTests {
    private let status = ReachabilityStatus(
        path: NetworkPath(state: .reachable, ipv4: true), sequence: 3, changedAt: Date())

    private func router(_ policy: CrossOriginPolicy) -> RequestRouter {
        let snapshot = StatusSnapshot(status, extraHeaders: CrossOrigin(policy: policy).sharedHeaders)
        let hub = EventHub(initialFrame: EventFrame.status(status).bytes, retryMilliseconds: 2000)
        return RequestRouter(
            monitor: NetworkMonitor.shared, snapshot: snapshot, hub: hub, readiness: [.always],
            isShuttingDown: { false },
            rejections: RejectionLog(logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }),
            crossOrigin: policy)
    }

    private func respond(
        _ router: RequestRouter, _ method: String, _ path: String, origin: String? = nil
    ) -> HTTPResponse {
        var headers: [HTTPField] = []
        if let origin { headers.append(HTTPField("Origin", origin)) }
        if method == "OPTIONS" { headers.append(HTTPField("Access-Control-Request-Method", "GET")) }
        return router.respond(
            to: HTTPRequest(method: method, path: path, version: "HTTP/1.1", headers: headers),
            on: RecordingConnection())
    }

    @Test func parsesStarAndExactOrigins() throws {
        #expect(try CrossOriginPolicy.parse("*").get() == .any)
        #expect(
            try CrossOriginPolicy.parse(" https://dash.example:8443 ,http://127.0.0.1:3000").get()
                == .origins(["https://dash.example:8443", "http://127.0.0.1:3000"]))
    }

    @Test(arguments: [
        "", ",", "dash.example", "ftp://dash.example", "https://", "https://dash.example/",
        "https://dash.example/path", "https://user@dash.example", "https://dash.example?x", "*,https://a.example",
        "https://d ash.example",
    ])
    func refusesWhatIsNotAnOrigin(text: String) {
        guard case .failure(let refused) = CrossOriginPolicy.parse(text) else {
            Issue.record("accepted \(text)")
            return
        }
        #expect(!refused.description.isEmpty)
    }

    @Test func offByDefaultNothingChanges() {
        let router = router(.none)
        let status = respond(router, "GET", "/status", origin: "https://dash.example")
        #expect(status.headers.value(of: "Access-Control-Allow-Origin") == nil)
        #expect(status.headers.value(of: "Vary") == nil)
        let preflight = respond(router, "OPTIONS", "/status", origin: "https://dash.example")
        #expect(preflight.status == 405)
        #expect(preflight.headers.value(of: "Allow") == "GET, HEAD")
    }

    @Test func starLetsEveryOriginReadStatusAndEvents() {
        let router = router(.any)
        #expect(respond(router, "GET", "/status").headers.value(of: "Access-Control-Allow-Origin") == "*")
        let events = respond(router, "GET", "/events", origin: "https://x.example")
        #expect(events.headers.value(of: "Access-Control-Allow-Origin") == "*")
        #expect(events.headers.value(of: "Content-Type") == "text/event-stream")
        if case .stream(let stream) = events.body { router.streamEnded(stream) }
        let preflight = respond(router, "OPTIONS", "/events", origin: "https://x.example")
        #expect(preflight.status == 204)
        #expect(preflight.headers.value(of: "Access-Control-Allow-Origin") == "*")
        #expect(preflight.headers.value(of: "Access-Control-Allow-Methods") == "GET, HEAD")
        #expect(preflight.headers.value(of: "Access-Control-Allow-Headers")?.contains("Last-Event-ID") == true)
        #expect(respond(router, "GET", "/readyz").headers.value(of: "Access-Control-Allow-Origin") == nil)
        #expect(respond(router, "OPTIONS", "/readyz", origin: "https://x.example").status == 405)
    }

    @Test func aListNamesOnlyListedOriginsAndVariesByOrigin() {
        let router = router(.origins(["https://dash.example"]))
        let listed = respond(router, "GET", "/status", origin: "https://dash.example")
        #expect(listed.status == 200)
        #expect(listed.headers.value(of: "Access-Control-Allow-Origin") == "https://dash.example")
        #expect(listed.headers.value(of: "Vary") == "Origin")
        #expect(listed.bodyBytes == status.jsonBytes())
        let other = respond(router, "GET", "/status", origin: "https://evil.example")
        #expect(other.headers.value(of: "Access-Control-Allow-Origin") == nil)
        #expect(other.headers.value(of: "Vary") == "Origin", "caches keep one copy per origin")
        #expect(respond(router, "OPTIONS", "/status", origin: "https://dash.example").status == 204)
        let refused = respond(router, "OPTIONS", "/status", origin: "https://evil.example")
        #expect(refused.status == 403)
        #expect(refused.headers.value(of: "Content-Type") == "application/problem+json")
    }
}
