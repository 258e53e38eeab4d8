import Foundation
import Reachable
import Testing

@testable import Probes

/// Through a proxy a check resolves, routes and connects to the proxy: what the pipeline asks for,
/// the details that name it, and the book's first document entry.
@Suite struct ProbeEndpointTests {
    static let proxy = try! ProxyURL.parse("http://user:s3cret@198.18.0.1:3128").get()

    static func url(_ text: String) throws -> TargetURL { try TargetSpec.parse("t=\(text)").url }

    @Test func aProxiedCheckConnectsToTheProxy() throws {
        let direct = ProbeEndpoint(try Self.url("https://api.test/"), proxy: nil)
        #expect(direct.host == "api.test" && direct.literal == nil && direct.label == nil)
        let proxied = ProbeEndpoint(try Self.url("https://[2001:db8::1]/"), proxy: Self.proxy)
        #expect(proxied.host == "198.18.0.1" && proxied.literal == IPAddress("198.18.0.1"))
        #expect(proxied.label == "proxy 198.18.0.1:3128")
        let named = ProbeEndpoint(
            try Self.url("http://198.19.0.10/"), proxy: try ProxyURL.parse("proxy.test:8080").get())
        #expect(named.host == "proxy.test" && named.literal == nil, "the proxy's name is resolved, the URL's is not")
    }

    @Test func onlyTheFailuresThatConcernTheProxyNameIt() throws {
        let endpoint = ProbeEndpoint(try Self.url("https://api.test/"), proxy: Self.proxy)
        var result = ProbePipeline.Result(
            unresolved: .dns, unresolvedDetail: "NXDOMAIN from 198.18.0.53",
            lookupDetails: [.ipv6: "SERVFAIL from 198.18.0.53"])
        result.families = [
            ProbePipeline.FamilyResult(
                family: .ipv4, address: IPAddress("198.18.0.1"), interface: "eth0",
                outcome: .failed(.refused, detail: "ECONNREFUSED: connection refused")),
            ProbePipeline.FamilyResult(
                family: .ipv6, outcome: .failed(.proxy, detail: "proxy answered 403 to CONNECT api.test:443")),
        ]
        let labelled = endpoint.labelled(result)
        #expect(labelled.unresolvedDetail == "proxy 198.18.0.1:3128: NXDOMAIN from 198.18.0.53")
        #expect(labelled.lookupDetails[.ipv6] == "proxy 198.18.0.1:3128: SERVFAIL from 198.18.0.53")
        #expect(labelled.families[0].outcome.detail == "proxy 198.18.0.1:3128: ECONNREFUSED: connection refused")
        #expect(labelled.families[1].outcome.detail == "proxy answered 403 to CONNECT api.test:443")
        let direct = ProbeEndpoint(try Self.url("https://api.test/"), proxy: nil).labelled(result)
        #expect(direct.families[0].outcome.detail == "ECONNREFUSED: connection refused")
    }

    @Test func aProxiedBookShowsTheProxyWithoutCredentialsFromItsFirstEntry() throws {
        var configuration = ProbeConfiguration()
        configuration.targets = [
            try TargetSpec.parse("web=https://api.test/"), try TargetSpec.parse("db=tcp://db.test:5432"),
            try TargetSpec.parse("pinned@wan1=https://api.test/"),
        ]
        configuration.proxies = .always(Self.proxy)
        configuration.connectivity = try ConnectivitySpec.parse(url: "http://check.test/generate_204")
        let first = configuration.initialTargets(since: Date())
        #expect(first.map(\.proxy) == ["http://198.18.0.1:3128", nil, nil])
        // The proxy's literal is known before any probe: its address and family, as a literal target's.
        #expect(first[0].addresses == ["198.18.0.1"] && first[0].ipv4?.state == .unknown && first[0].ipv6 == nil)
        #expect(configuration.initialConnectivity(since: Date()).proxy == "http://198.18.0.1:3128")
        #expect(!"\(first)".contains("s3cret"))
    }
}
