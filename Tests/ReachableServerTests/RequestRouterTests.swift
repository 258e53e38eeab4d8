import Foundation
import Logging
import Reachable
import Testing

@testable import ReachableServer

/// Requests in, responses out, with no engine and no socket: every route, method and version.
struct RequestRouterTests {
    private let monitor = NetworkMonitor.shared
    private let snapshot: StatusSnapshot
    private let hub: EventHub

    init() {
        let status = ReachabilityStatus(
            path: NetworkPath(state: .reachable, ipv4: true), sequence: 5, changedAt: Date())
        snapshot = StatusSnapshot(status)
        hub = EventHub(initialFrame: EventFrame.status(status).bytes, retryMilliseconds: 2000)
    }

    private func router(
        readiness: [ReadinessCondition] = [.reachable], isShuttingDown: Bool = false
    ) -> RequestRouter {
        RequestRouter(
            monitor: monitor, snapshot: snapshot, hub: hub, readiness: readiness,
            isShuttingDown: { isShuttingDown },
            rejections: RejectionLog(logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        )
    }

    private func respond(
        _ method: String, _ path: String, version: String = "HTTP/1.1", query: [HTTPRequest.QueryItem] = [],
        headers: [HTTPField] = [], router: RequestRouter? = nil
    ) -> HTTPResponse {
        let request = HTTPRequest(method: method, path: path, version: version, query: query, headers: headers)
        return (router ?? self.router()).respond(to: request, on: RecordingConnection())
    }

    static let paths = ["/status", "/events", "/changes", "/healthz", "/livez", "/readyz", "/metrics"]

    @Test(arguments: ["GET", "HEAD"])
    func statusServesTheDocumentPreparedOnce(method: String) throws {
        let first = respond(method, "/status")
        let second = respond(method, "/status")
        #expect(first.status == 200)
        #expect(
            first.headers == [HTTPField("Content-Type", "application/json"), HTTPField("Cache-Control", "no-cache")])
        #expect(first.bodyBytes == snapshot.status.jsonBytes())
        guard case .shared(let one) = first.body, case .shared(let other) = second.body else {
            Issue.record("/status is not a shared response")
            return
        }
        #expect(one === other, "no request makes its own copy")
    }

    @Test func aChangeReplacesTheStatusDocument() {
        let next = ReachabilityStatus(path: NetworkPath(state: .unreachable), sequence: 6, changedAt: Date())
        _ = snapshot.update(next)
        #expect(respond("GET", "/status").bodyBytes == next.jsonBytes())
    }

    @Test func getEventsOpensAStreamThatStartsWithTheCurrentDocument() throws {
        let response = respond("GET", "/events")
        #expect(response.status == 200)
        #expect(response.headers == RequestRouter.eventStreamHeaders)
        #expect(response.header("Content-Type") == "text/event-stream")
        #expect(response.header("Cache-Control") == "no-cache")
        #expect(response.header("X-Accel-Buffering") == "no")
        let stream = try #require(response.stream)
        #expect(hub.count == 1)
        let json = String(decoding: snapshot.status.jsonBytes(), as: UTF8.self)
        #expect(stream.readAvailable().text == "retry: 2000\nid: 5\nevent: status\ndata: \(json)\n\n")
    }

    @Test func headEventsAnswersTheHeadersWithoutAStream() {
        let response = respond("HEAD", "/events")
        #expect(response.status == 200)
        #expect(response.headers == RequestRouter.eventStreamHeaders)
        #expect(response.bodyBytes == [])
        #expect(hub.count == 0)
    }

    @Test func anEndedStreamLeavesTheHub() throws {
        let router = router()
        let stream = try #require(respond("GET", "/events", router: router).stream)
        router.streamEnded(stream)
        #expect(hub.count == 0)
    }

    @Test(
        arguments: [
            ([HTTPField("Last-Event-ID", "3")], [HTTPRequest.QueryItem]()),
            ([], [HTTPRequest.QueryItem(name: "last_event_id", value: "999999")]),
            ([HTTPField("last-event-id", "not-a-number")], [HTTPRequest.QueryItem(name: "x", value: nil)]),
        ])
    func aLastEventIDStillStartsWithTheCurrentDocument(headers: [HTTPField], query: [HTTPRequest.QueryItem]) throws {
        let stream = try #require(respond("GET", "/events", query: query, headers: headers).stream)
        #expect(stream.readAvailable().text.hasPrefix("retry: 2000\nid: 5\nevent: status\n"))
    }

    @Test(arguments: ["GET", "HEAD"], ["/healthz", "/livez"])
    func livenessFollowsTheMonitor(method: String, path: String) {
        let response = respond(method, path)
        #expect(response.status == (monitor.failure == nil ? 200 : 503))
        #expect(response.headers == RequestRouter.healthHeaders)
        #expect(response.bodyBytes == HealthDocument.liveness(failure: monitor.failure).body)
    }

    @Test(arguments: ["GET", "HEAD"])
    func readinessFollowsTheNetworkThenShutdown(method: String) {
        #expect(respond(method, "/readyz").status == 200)
        let stopping = respond(method, "/readyz", router: router(isShuttingDown: true))
        #expect(stopping.status == 503)
        #expect(stopping.headers == RequestRouter.healthHeaders)
        #expect(stopping.bodyText?.contains("shutting down") == true)

        _ = snapshot.update(ReachabilityStatus(path: NetworkPath(state: .unreachable), sequence: 6, changedAt: Date()))
        #expect(respond(method, "/readyz").status == 503)
        #expect(respond(method, "/readyz", router: router(readiness: [.always])).status == 200)
    }

    @Test(arguments: ["GET", "HEAD"])
    func readinessNeedsEveryCondition(method: String) {
        let since = Date()
        let db = TargetStatus(name: "db", url: "tcp://db.test:5432", since: since)
        var status = ReachabilityStatus(
            path: NetworkPath(state: .reachable, ipv4: true), targets: [db], sequence: 6, changedAt: since)
        _ = snapshot.update(status)
        let router = router(readiness: [.reachable, .target("db")])
        let unknown = respond(method, "/readyz", router: router)
        #expect(unknown.status == 503, "db is not evaluated yet")
        #expect(unknown.headers == RequestRouter.healthHeaders)
        #expect(
            unknown.bodyBytes
                == HealthDocument.readiness(
                    status: status, conditions: [.reachable, .target("db")], isShuttingDown: false
                )
                .body)

        status.targets[0].state = .reachable
        status.sequence = 7
        _ = snapshot.update(status)
        #expect(respond(method, "/readyz", router: router).status == 200)
        #expect(respond(method, "/readyz", router: self.router(readiness: [.reachable, .online])).status == 503)
        let stopping = self.router(readiness: [.reachable, .target("db")], isShuttingDown: true)
        #expect(respond(method, "/readyz", router: stopping).status == 503)
    }

    @Test(arguments: paths, ["POST", "PUT", "DELETE", "OPTIONS", "get", "BREW"])
    func otherMethodsAreNotAllowed(path: String, method: String) {
        let response = respond(method, path)
        #expect(response.status == 405)
        #expect(response.header("Allow") == "GET, HEAD")
        #expect(response.header("Content-Type") == "application/problem+json")
        #expect(response.bodyBytes == Problem.methodNotAllowed.json)
        #expect(hub.count == 0)
    }

    @Test(arguments: paths, ["G T", "", "GET\r", "(GET)", "GÉT"])
    func methodsThatAreNotTokensAreBadRequests(path: String, method: String) {
        let response = respond(method, path)
        #expect(response.status == 400)
        #expect(response.header("Allow") == nil)
        #expect(response.bodyBytes == Problem.badMethod.json)
    }

    @Test(arguments: paths, ["HTTP/2.0", "HTTP/1.x", "", "http/1.1", "HTTP/1.1 ", "HTTP/1.10"])
    func versionsOtherThanHTTP1AreBadRequests(path: String, version: String) {
        let response = respond("GET", path, version: version)
        #expect(response.status == 400)
        #expect(response.bodyBytes == Problem.badRequestLine.json)
        #expect(hub.count == 0)
    }

    /// A higher minor version is served as the highest one implemented (RFC 9110 §2.5).
    @Test(arguments: ["HTTP/1.0", "HTTP/1.1", "HTTP/1.2", "HTTP/1.9"])
    func everyHTTP1VersionIsServed(version: String) {
        #expect(respond("GET", "/status", version: version).status == 200)
    }

    @Test(arguments: ["//", "/status/", "/STATUS", "/events/x", "//status", "/status%00", "/metrics/", "/status?x=1"])
    func unknownPathsAreNotFoundWhateverTheMethod(path: String) {
        for method in ["GET", "HEAD", "POST", "BREW"] {
            let response = respond(method, path)
            #expect(response.status == 404)
            #expect(response.header("Content-Type") == "application/problem+json")
            #expect(response.bodyBytes == Problem.notFound.json)
        }
    }

    @Test(arguments: paths)
    func theQueryStringNeverChangesRouting(path: String) {
        let plain = respond("GET", path)
        let queried = respond(
            "GET", path,
            query: [.init(name: "last_event_id", value: "7"), .init(name: "path", value: "/x"), .init(name: "flag")]
        )
        #expect(queried.status == plain.status)
        #expect(queried.headers == plain.headers)
        #expect(respond("POST", path, query: [.init(name: "method", value: "GET")]).status == 405)
    }
}

/// `/changes` through the router: the history's rendered answer, shared, for GET and HEAD.
struct ChangesRouteTests {
    @Test(arguments: ["GET", "HEAD"])
    func changesServesTheRenderedHistory(method: String) {
        let status = ReachabilityStatus(path: NetworkPath(state: .reachable), sequence: 1, changedAt: Date())
        let snapshot = StatusSnapshot(status)
        let changes = ChangeHistory(capacity: 4, baseline: snapshot.status)
        var next = status
        next.path = NetworkPath(state: .unreachable)
        next.sequence = 2
        changes.record(next)
        let router = RequestRouter(
            monitor: .shared, snapshot: snapshot,
            hub: EventHub(initialFrame: snapshot.frame, retryMilliseconds: 2000),
            changes: changes, readiness: [], isShuttingDown: { false },
            rejections: RejectionLog(logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }))
        let response = router.respond(
            to: HTTPRequest(method: method, path: "/changes", version: "HTTP/1.1", query: [], headers: []),
            on: RecordingConnection())
        #expect(response.status == 200)
        guard case .shared(let shared) = response.body else {
            Issue.record("/changes is not a shared response")
            return
        }
        #expect(shared === changes.response)
        #expect(String(decoding: shared.body, as: UTF8.self).contains(#""field":"state","from":"reachable""#))
    }
}
