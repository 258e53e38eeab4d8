import Probes
import Reachable
import Testing

/// The target URL table (docs/probes.md) and every way a `--target` can be refused.
@Suite struct TargetSpecTests {
    struct Valid: Sendable, CustomTestStringConvertible {
        var spec: String
        var name: String
        var scheme: TargetURL.Scheme
        var host: String
        var literal: String?
        var port: UInt16?
        var path: String
        var requestURL: String?
        var testDescription: String { spec }
    }

    static let valid: [Valid] = [
        Valid(
            spec: "dns=host://example.internal", name: "dns", scheme: .host, host: "example.internal", port: nil,
            path: "", requestURL: nil),
        Valid(
            spec: "lit=host://198.18.1.10", name: "lit", scheme: .host, host: "198.18.1.10", literal: "198.18.1.10",
            port: nil, path: "", requestURL: nil),
        Valid(
            spec: "v6=host://[2001:db8::1]", name: "v6", scheme: .host, host: "2001:db8::1", literal: "2001:db8::1",
            port: nil, path: "", requestURL: nil),
        Valid(
            spec: "db=tcp://db.internal:5432", name: "db", scheme: .tcp, host: "db.internal", port: 5432, path: "",
            requestURL: "http://db.internal:5432/"),
        Valid(
            spec: "db6=tcp://[::1]:5432/", name: "db6", scheme: .tcp, host: "::1", literal: "::1", port: 5432,
            path: "", requestURL: "http://[::1]:5432/"),
        Valid(
            spec: "app=http://localhost:8080/healthz", name: "app", scheme: .http, host: "localhost", port: 8080,
            path: "/healthz", requestURL: "http://localhost:8080/healthz"),
        Valid(
            spec: "web=http://example.internal", name: "web", scheme: .http, host: "example.internal", port: 80,
            path: "/", requestURL: "http://example.internal:80/"),
        Valid(
            spec: "q=http://h.internal?ready=1&x=y", name: "q", scheme: .http, host: "h.internal", port: 80,
            path: "/?ready=1&x=y", requestURL: "http://h.internal:80/?ready=1&x=y"),
        Valid(
            spec: "api.v2_x-y=https://api.example.internal/v1/ping", name: "api.v2_x-y", scheme: .https,
            host: "api.example.internal", port: 443, path: "/v1/ping",
            requestURL: "https://api.example.internal:443/v1/ping"),
        Valid(
            spec: "tls6=HTTPS://[2001:db8::10]:8443/", name: "tls6", scheme: .https, host: "2001:db8::10",
            literal: "2001:db8::10", port: 8443, path: "/", requestURL: "https://[2001:db8::10]:8443/"),
        Valid(
            spec: "fqdn=tcp://db.internal.:1", name: "fqdn", scheme: .tcp, host: "db.internal.", port: 1, path: "",
            requestURL: "http://db.internal.:1/"),
        Valid(
            spec: "svc=tcp://_sip._tcp.example:65535", name: "svc", scheme: .tcp, host: "_sip._tcp.example",
            port: 65535, path: "", requestURL: "http://_sip._tcp.example:65535/"),
        Valid(
            spec: "\(String(repeating: "n", count: 63))=host://a", name: String(repeating: "n", count: 63),
            scheme: .host, host: "a", port: nil, path: "", requestURL: nil),
        Valid(
            spec: "gw=icmp://gw.internal", name: "gw", scheme: .icmp, host: "gw.internal", port: nil, path: "",
            requestURL: nil),
        Valid(
            spec: "gw6=icmp://[2001:db8::1]/", name: "gw6", scheme: .icmp, host: "2001:db8::1", literal: "2001:db8::1",
            port: nil, path: "", requestURL: nil),
    ]

    @Test(arguments: valid)
    func validSpecParses(_ expected: Valid) throws {
        let target = try TargetSpec.parse(expected.spec)
        #expect(target.name == expected.name)
        #expect(target.url.scheme == expected.scheme)
        #expect(target.url.host == expected.host)
        #expect(target.url.literal == expected.literal.flatMap(IPAddress.init))
        #expect(target.url.port == expected.port)
        #expect(target.url.path == expected.path)
        #expect(target.url.requestURL == expected.requestURL)
        #expect(
            target.url.text == String(expected.spec.drop { $0 != "=" }.dropFirst()), "the document shows it as written")
    }

    static let invalid: [(String, SpecError.Problem)] = [
        ("db", .missingEquals),
        ("tcp://db:5432", .missingEquals),
        ("=tcp://db:5432", .invalidName),
        ("\(String(repeating: "n", count: 64))=host://a", .invalidName),
        ("my db=tcp://db:5432", .invalidName),
        ("db/1=tcp://db:5432", .invalidName),
        ("dé=tcp://db:5432", .invalidName),
        ("db=", .unsupportedScheme),
        ("db=db.internal:5432", .unsupportedScheme),
        ("db=ftp://db.internal/", .unsupportedScheme),
        ("db=udp://db.internal:53", .unsupportedScheme),
        ("db=tcp:/db.internal:5432", .unsupportedScheme),
        ("db=tcp://db.internal", .missingPort),
        ("db=tcp://:5432", .missingHost),
        ("db=http:///path", .missingHost),
        ("db=tcp://db.internal:", .invalidPort),
        ("db=tcp://db.internal:0", .invalidPort),
        ("db=tcp://db.internal:65536", .invalidPort),
        ("db=tcp://db.internal:+80", .invalidPort),
        ("db=tcp://db.internal:http", .invalidPort),
        ("db=tcp://db.internal:5432/x", .unexpectedPath),
        ("db=host://db.internal:53", .unexpectedPort),
        ("db=host://db.internal/path", .unexpectedPath),
        ("gw=icmp://gw.internal:80", .unexpectedPort),
        ("gw=icmp://gw.internal/ping", .unexpectedPath),
        ("gw=icmp://", .missingHost),
        ("db=tcp://2001:db8::1:5432", .invalidHost),
        ("db=tcp://[2001:db8::1:5432", .invalidHost),
        ("db=tcp://[198.18.0.1]:5432", .invalidHost),
        ("db=tcp://[fe80::1%eth0]:5432", .invalidHost),
        ("db=tcp://[2001:db8::1]x:5432", .invalidHost),
        ("db=tcp://999.1.1.1:5432", .invalidHost),
        ("db=tcp://127.1:5432", .invalidHost),
        ("db=tcp://-db.internal:5432", .invalidHost),
        ("db=tcp://db..internal:5432", .invalidHost),
        ("db=tcp://db internal:5432", .invalidHost),
        ("db=tcp://dé.internal:5432", .invalidHost),
        ("db=tcp://\(String(repeating: "a", count: 64)).internal:5432", .invalidHost),
        ("web=http://user:secret@web.internal/", .credentials),
        ("web=http://web.internal/a b", .invalidPath),
        ("web=http://web.internal/\u{7}", .invalidPath),
        ("web=http://web.internal/é", .invalidPath),
    ]

    @Test(arguments: invalid)
    func invalidSpecIsRefusedNamingIt(_ spec: String, _ problem: SpecError.Problem) {
        #expect(throws: SpecError(.target, spec: spec, problem: problem)) { try TargetSpec.parse(spec) }
        do {
            _ = try TargetSpec.parse(spec)
        } catch {
            #expect(error.description.contains("\"\(spec)\""), "the message names the spec: \(error)")
        }
    }

    @Test func aTargetPinnedToAnInterfaceKeepsItsNameAndTheInterface() throws {
        let pinned = try TargetSpec.parse("db@wan1=tcp://db.internal:5432")
        #expect(pinned.name == "db" && pinned.egress == .pinned(to: "wan1"))
        #expect(pinned.url.text == "tcp://db.internal:5432")
        #expect(pinned.text == "db@wan1=tcp://db.internal:5432", "written back as given")
        #expect(try TargetSpec.parse("db=tcp://db.internal:5432").egress == .kernelChoice)
        #expect(try TargetSpec.parse("x@eth0.100=host://[2001:db8::1]").egress == .pinned(to: "eth0.100"))
        #expect(try TargetSpec.parse("y@abcdefghijklmno=host://a").egress == .pinned(to: "abcdefghijklmno"))
        #expect(try TargetSpec.parse("web@lte0=http://w.internal/?a=b@c").egress == .pinned(to: "lte0"))
    }

    @Test(arguments: [
        "db@=tcp://db:1", "db@a/b=tcp://db:1", "db@eth 0=tcp://db:1", "db@abcdefghijklmnop=tcp://db:1",
        "db@eth\t0=tcp://db:1",
    ])
    func aBadInterfaceIsRefusedNamingIt(_ spec: String) {
        #expect(throws: SpecError(.target, spec: spec, problem: .invalidInterface)) { try TargetSpec.parse(spec) }
        #expect(SpecError(.target, spec: spec, problem: .invalidInterface).description.contains("interface"))
    }

    @Test func namesStayUniqueWhateverTheInterface() {
        #expect(throws: SpecError(.target, spec: "a@eth1=tcp://a:1", problem: .duplicateName)) {
            try TargetSpec.parseList(["a@eth0=tcp://a:1", "a@eth1=tcp://a:1"])
        }
        #expect(throws: SpecError(.target, spec: "@eth0=tcp://a:1", problem: .invalidName)) {
            try TargetSpec.parse("@eth0=tcp://a:1")
        }
    }

    @Test func anUnknownSchemeIsRefusedListingEveryRegisteredKind() {
        #expect(ProbeKinds.schemes == [.host, .tcp, .http, .https, .icmp, .dns])
        let refusal = SpecError(.target, spec: "x=udp://x:1", problem: .unsupportedScheme).description
        #expect(
            refusal.hasSuffix("the URL must start with host://, tcp://, http://, https://, icmp:// or dns://"),
            "\(refusal)")
    }

    @Test func listKeepsConfigurationOrderAndRefusesDuplicateNames() throws {
        let targets = try TargetSpec.parseList(["b=host://b.internal", "a=tcp://a.internal:1", "B=host://b.internal"])
        #expect(targets.map(\.name) == ["b", "a", "B"], "names are case-sensitive, order is kept")
        #expect(throws: SpecError(.target, spec: "a=host://other.internal", problem: .duplicateName)) {
            try TargetSpec.parseList(["a=tcp://a.internal:1", "b=host://b.internal", "a=host://other.internal"])
        }
        #expect(try TargetSpec.parseList([]).isEmpty)
    }

    @Test func listStopsAtTheFirstInvalidSpec() {
        #expect(throws: SpecError(.target, spec: "bad", problem: .missingEquals)) {
            try TargetSpec.parseList(["a=host://a.internal", "bad", "also bad"])
        }
    }

    @Test func environmentValueSplitsOnAnyWhitespace() {
        #expect(
            TargetSpec.splitEnvironment("  a=host://a\tb=tcp://b:1\n c=http://c/?x=1  ")
                == ["a=host://a", "b=tcp://b:1", "c=http://c/?x=1"])
        #expect(TargetSpec.splitEnvironment("   ").isEmpty)
    }

    @Test func errorMessageSaysWhatIsExpected() {
        let error = SpecError(.target, spec: "db=tcp://db", problem: .missingPort)
        #expect(error.description == "invalid target \"db=tcp://db\": tcp:// needs a port (tcp://HOST:PORT)")
    }
}

@Suite struct ConnectivitySpecTests {
    @Test func httpAndHttpsAreAccepted() throws {
        let plain = try ConnectivitySpec.parse(url: "http://check.internal/generate_204")
        #expect(plain.url.scheme == .http)
        #expect(plain.url.requestURL == "http://check.internal:80/generate_204")
        #expect(plain.expectedResponse == nil)
        let secure = try ConnectivitySpec.parse(
            url: "https://[2001:db8::1]:8443/check", response: "NetworkManager is online")
        #expect(secure.url.literal == IPAddress("2001:db8::1"))
        #expect(secure.expectedResponse == Array("NetworkManager is online".utf8))
        #expect(try ConnectivitySpec.parse(url: "http://c.internal/", response: "").expectedResponse == nil)
    }

    @Test(arguments: [
        ("tcp://check.internal:80", SpecError.Problem.unsupportedScheme),
        ("host://check.internal", .unsupportedScheme),
        ("check.internal/generate_204", .unsupportedScheme),
        ("", .unsupportedScheme),
        ("http://", .missingHost),
        ("http://check.internal:99999/", .invalidPort),
        ("http://a:b@check.internal/", .credentials),
        ("http://check internal/", .invalidHost),
    ])
    func invalidURLIsRefusedNamingIt(_ url: String, _ problem: SpecError.Problem) {
        #expect(throws: SpecError(.connectivityURL, spec: url, problem: problem)) {
            try ConnectivitySpec.parse(url: url)
        }
        #expect(
            SpecError(.connectivityURL, spec: url, problem: problem).description
                .hasPrefix("invalid connectivity URL \"\(url)\": "))
    }

    @Test func responseLongerThanTheEngineKeepsIsRefused() {
        let long = String(repeating: "x", count: ProbeLimits.maximumExpectedBody + 1)
        #expect(throws: SpecError(.connectivityResponse, spec: long, problem: .responseTooLong)) {
            try ConnectivitySpec.parse(url: "http://c.internal/", response: long)
        }
        #expect(throws: Never.self) {
            try ConnectivitySpec.parse(
                url: "http://c.internal/", response: String(repeating: "x", count: ProbeLimits.maximumExpectedBody))
        }
    }
}
