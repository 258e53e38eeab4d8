import Testing

@testable import ReachableServer

struct RouteTests {
    @Test(arguments: ["GET", "HEAD"])
    func everyResourceAnswersGetAndHead(method: String) {
        #expect(Route(method: method, path: "/status") == .status)
        #expect(Route(method: method, path: "/events") == .events)
        #expect(Route(method: method, path: "/healthz") == .liveness)
        #expect(Route(method: method, path: "/livez") == .liveness)
        #expect(Route(method: method, path: "/readyz") == .readiness)
        #expect(Route(method: method, path: "/metrics") == .metrics)
    }

    @Test(arguments: ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "FOO", "get"])
    func otherMethodTokensAreNotAllowed(method: String) {
        #expect(Route(method: method, path: "/status") == .problem(.methodNotAllowed))
    }

    @Test(arguments: ["G T", "G\u{0}T", "", "GET\r", "(GET)", "G/T", "GÉT"])
    func methodsThatAreNotTokensAreBadRequests(method: String) {
        #expect(Route(method: method, path: "/events") == .problem(.badMethod))
    }

    @Test(arguments: ["//", "/status/", "/STATUS", "/events/x", "//status", "/status%20", "/metrics/", "/METRICS"])
    func unknownPathsAreNotFoundWhateverTheMethod(path: String) {
        #expect(Route(method: "GET", path: path) == .problem(.notFound))
        #expect(Route(method: "POST", path: path) == .problem(.notFound))
    }

    @Test func methodNotAllowedProblemIsRFC9457() throws {
        let text = String(decoding: Problem.methodNotAllowed.json, as: UTF8.self)
        #expect(text.contains("\"type\":\"about:blank\""))
        #expect(text.contains("\"status\":405"))
        #expect(text.contains("\"title\":\"Method Not Allowed\""))
    }
}
