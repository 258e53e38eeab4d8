import Foundation
import Testing

@testable import ReachableServer

/// RFC 9457 problem documents: the one error shape on the wire.
struct ProblemTests {
    static let problems: [Problem] = [.notFound, .methodNotAllowed, .badRequestLine, .badMethod]

    @Test(arguments: problems)
    func theBodyIsAProblemDocument(problem: Problem) throws {
        let body = try #require(JSONSerialization.jsonObject(with: Data(problem.json)) as? [String: Any])
        #expect(Set(body.keys) == ["type", "title", "status", "detail"])
        #expect(body["type"] as? String == "about:blank")
        #expect(body["title"] as? String == problem.title)
        #expect(body["status"] as? Int == problem.status)
        #expect(body["detail"] as? String == problem.detail)
    }

    @Test func theFieldsAreInTheirUsualOrder() {
        #expect(
            String(decoding: Problem.methodNotAllowed.json, as: UTF8.self)
                == #"{"type":"about:blank","title":"Method Not Allowed","status":405,"detail":"Only GET and HEAD are served."}"#
        )
    }

    @Test(arguments: problems)
    func theResponseCarriesStatusTypeAndNoCaching(problem: Problem) {
        let response = problem.response
        #expect(response.status == problem.status)
        #expect(response.bodyBytes == problem.json)
        #expect(response.header("Content-Type") == "application/problem+json")
        #expect(response.header("Cache-Control") == "no-store")
    }

    @Test func onlyMethodNotAllowedSaysWhichMethodsAre() {
        #expect(Problem.methodNotAllowed.response.header("Allow") == "GET, HEAD")
        for problem in [Problem.notFound, .badRequestLine, .badMethod] {
            #expect(problem.response.header("Allow") == nil)
        }
    }
}
