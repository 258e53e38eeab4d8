import Foundation
import Logging
import Reachable
import Testing

@testable import ReachableServer

/// The page at `/`: its route, its headers, and a Content-Security-Policy that allows exactly
/// the inline style and script it carries.
struct PageTests {
    private func respond(_ method: String, _ path: String) -> HTTPResponse {
        let status = ReachabilityStatus(
            path: NetworkPath(state: .reachable, ipv4: true), sequence: 1, changedAt: Date())
        let router = RequestRouter(
            monitor: .shared, snapshot: StatusSnapshot(status),
            hub: EventHub(initialFrame: EventFrame.status(status).bytes, retryMilliseconds: 2000),
            readiness: [.reachable], isShuttingDown: { false },
            rejections: RejectionLog(logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        )
        return router.respond(
            to: HTTPRequest(method: method, path: path, version: "HTTP/1.1", query: [], headers: []),
            on: RecordingConnection())
    }

    private var page: String { String(decoding: Page.response.body, as: UTF8.self) }

    /// The text between the one `<open>` and its `</close>` in the served page.
    private func element(_ name: String) throws -> String {
        let parts = page.components(separatedBy: "<\(name)>")
        try #require(parts.count == 2, "one <\(name)> element, not \(parts.count - 1)")
        let inner = parts[1].components(separatedBy: "</\(name)>")
        try #require(inner.count == 2, "one </\(name)>")
        return inner[0]
    }

    private func hash(_ text: String) -> String { Page.cspHash(text) }

    @Test(arguments: ["GET", "HEAD"])
    func rootIsThePage(method: String) {
        #expect(Route(method: method, path: "/") == .page)
        #expect(Route(method: method, path: "/index.html") == .problem(.notFound))
        #expect(Route(method: method, path: "//") == .problem(.notFound))
    }

    @Test(arguments: ["POST", "PUT", "DELETE", "OPTIONS", "BREW"])
    func otherMethodsAreNotAllowed(method: String) {
        let response = respond(method, "/")
        #expect(response.status == 405)
        #expect(response.header("Allow") == "GET, HEAD")
    }

    @Test(arguments: ["GET", "HEAD"])
    func theRouteServesThePagePreparedOnce(method: String) throws {
        let first = respond(method, "/")
        let second = respond(method, "/")
        #expect(first.status == 200)
        #expect(first.headers == Page.headers)
        #expect(first.bodyBytes == Array(Page.html.utf8))
        guard case .shared(let one) = first.body, case .shared(let other) = second.body else {
            Issue.record("/ is not a shared response")
            return
        }
        #expect(one === other, "no request makes its own copy")
    }

    @Test func theHeadersAreThoseOfAnHTMLPageThatTrustsNothingElse() {
        let response = respond("GET", "/")
        #expect(response.header("Content-Type") == "text/html; charset=utf-8")
        #expect(response.header("Cache-Control") == "no-cache")
        #expect(response.header("X-Content-Type-Options") == "nosniff")
        #expect(response.header("Referrer-Policy") == "no-referrer")
        let policy = response.header("Content-Security-Policy") ?? ""
        let directives = Dictionary(
            uniqueKeysWithValues: policy.split(separator: ";").map { directive in
                let words = directive.split(separator: " ").map(String.init)
                return (words[0], Array(words.dropFirst()))
            })
        #expect(directives["default-src"] == ["'none'"])
        #expect(directives["script-src"] == ["'\(Page.scriptHash)'"])
        #expect(directives["style-src"] == ["'\(Page.styleHash)'"])
        #expect(directives["connect-src"] == ["'self'"])
        #expect(directives["img-src"] == ["data:"])
        #expect(directives["base-uri"] == ["'none'"])
        #expect(directives["form-action"] == ["'none'"])
        #expect(directives["frame-ancestors"] == ["'none'"])
        #expect(!policy.contains("unsafe"))
    }

    /// The policy names the hashes of exactly the style and script the page carries, taken from
    /// the served page itself (the files are embedded whole, nothing else is inlined).
    @Test func thePolicyHashesAreThoseOfTheInlineStyleAndScript() throws {
        let style = try element("style")
        let script = try element("script")
        #expect(style == Page.style && !style.isEmpty)
        #expect(script == Page.script && !script.isEmpty)
        let policy = Page.contentSecurityPolicy
        #expect(policy.contains("style-src '\(hash(style))'"), "\(policy)")
        #expect(policy.contains("script-src '\(hash(script))'"), "\(policy)")
    }

    @Test func theHashFunctionIsSHA256() {
        #expect(hash("") == "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=")
        #expect(hash("abc") == "sha256-ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=")
        // FIPS 180-4's two-block example (248d6a61…19db06c1).
        #expect(
            hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "sha256-JI1qYdIGOLjlwCaTDD5gOaM85Flk/yFn9uzt1BnbBsE=")
    }

    @Test func thePageIsSelfContainedAndWritesNoMarkupFromData() {
        let lowered = page.lowercased()
        for external in ["src=", "https://", "@import", "url("] {
            #expect(!lowered.contains(external), "the page references something outside itself: \(external)")
        }
        // The one http:// is the SVG namespace of the favicon the script draws.
        #expect(lowered.components(separatedBy: "http://").count == 2)
        #expect(lowered.contains("http://www.w3.org/2000/svg"))
        #expect(!lowered.contains(" style="), "inline style attributes would need 'unsafe-hashes'")
        #expect(!lowered.contains(" onclick=") && !lowered.contains(" onload="))
        for sink in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("] {
            #expect(!Page.script.contains(sink), "\(sink) would turn untrusted text into markup or code")
        }
        #expect(page.contains("<div id=\"state\">unknown</div>"))
        #expect(Page.response.body.count < 40_000, "the page is \(Page.response.body.count) bytes")
    }
}
