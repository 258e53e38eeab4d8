import Probes
import Reachable
import Testing

/// Which proxy an `http(s)://` check takes (the contract's "Through a proxy"): curl's variables,
/// `no_proxy` as curl matches it, `--proxy URL|none`, and every refused proxy URL.
@Suite struct ProxyChoiceTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var environment: [String: String]
        var url: String
        /// The proxy shown (`http://HOST:PORT`), or `nil` for direct.
        var proxy: String?
        var testDescription: String { "\(url) with \(environment.sorted { $0.key < $1.key })" }
    }

    static let environmentCases: [Case] = [
        Case(environment: [:], url: "http://api.test/", proxy: nil),
        Case(
            environment: ["http_proxy": "http://198.18.0.1:3128"], url: "http://api.test/",
            proxy: "http://198.18.0.1:3128"),
        // http_proxy is for http:// only.
        Case(environment: ["http_proxy": "http://198.18.0.1:3128"], url: "https://api.test/", proxy: nil),
        Case(
            environment: ["https_proxy": "proxy.test:8080"], url: "https://api.test/", proxy: "http://proxy.test:8080"),
        Case(environment: ["https_proxy": "proxy.test:8080"], url: "http://api.test/", proxy: nil),
        // Uppercase is honoured (libcurl itself ignores HTTP_PROXY); lowercase wins over it.
        Case(environment: ["HTTP_PROXY": "http://upper.test:1"], url: "http://api.test/", proxy: "http://upper.test:1"),
        Case(
            environment: ["HTTP_PROXY": "http://upper.test:1", "http_proxy": "http://lower.test:2"],
            url: "http://api.test/", proxy: "http://lower.test:2"),
        Case(
            environment: ["HTTPS_PROXY": "http://upper.test:1", "https_proxy": "http://lower.test:2"],
            url: "https://api.test/", proxy: "http://lower.test:2"),
        // An empty variable is unset: the other case applies.
        Case(
            environment: ["http_proxy": "", "HTTP_PROXY": "http://upper.test:1"], url: "http://api.test/",
            proxy: "http://upper.test:1"),
        // all_proxy for either scheme when the scheme's own is unset.
        Case(environment: ["all_proxy": "http://all.test:3"], url: "https://api.test/", proxy: "http://all.test:3"),
        Case(environment: ["ALL_PROXY": "http://all.test:3"], url: "http://api.test/", proxy: "http://all.test:3"),
        Case(
            environment: ["all_proxy": "http://all.test:3", "http_proxy": "http://web.test:4"], url: "http://api.test/",
            proxy: "http://web.test:4"),
        // Without a port: curl's 1080.
        Case(
            environment: ["http_proxy": "http://proxy.test"], url: "http://api.test/", proxy: "http://proxy.test:1080"),
        Case(
            environment: ["http_proxy": "[2001:db8::3]:3128/"], url: "http://api.test/",
            proxy: "http://[2001:db8::3]:3128"),
        // Credentials are used, never shown.
        Case(
            environment: ["https_proxy": "http://user:s3cret@198.18.0.1:3128"], url: "https://api.test/",
            proxy: "http://198.18.0.1:3128"),
    ]

    @Test(arguments: environmentCases) func theEnvironmentNamesTheProxyOfEachScheme(_ test: Case) throws {
        let choice = try ProxyChoice.resolve(option: nil, environment: test.environment)
        #expect(choice.proxy(for: try Self.url(test.url))?.shown == test.proxy)
    }

    struct Exception: Sendable, CustomTestStringConvertible {
        var noProxy: String
        var host: String
        var direct: Bool
        var testDescription: String { "\(host) with no_proxy=\(noProxy)" }
    }

    /// curl's rules (`Curl_check_noproxy`).
    static let exceptions: [Exception] = [
        Exception(noProxy: "api.test", host: "api.test", direct: true),
        Exception(noProxy: "api.test", host: "API.Test", direct: true),
        Exception(noProxy: "api.test", host: "eu.api.test", direct: true),
        Exception(noProxy: "api.test", host: "myapi.test", direct: false),
        Exception(noProxy: ".api.test", host: "api.test", direct: true),
        Exception(noProxy: ".api.test", host: "eu.api.test", direct: true),
        Exception(noProxy: "eu.api.test", host: "api.test", direct: false),
        Exception(noProxy: " other.test , api.test ", host: "api.test", direct: true),
        Exception(noProxy: "other.test,,", host: "api.test", direct: false),
        Exception(noProxy: "*", host: "anything.test", direct: true),
        Exception(noProxy: "*", host: "198.19.0.10", direct: true),
        Exception(noProxy: "api.test.", host: "api.test", direct: true),
        // IP literals and ranges match hosts written as IP literals only.
        Exception(noProxy: "198.19.0.10", host: "198.19.0.10", direct: true),
        Exception(noProxy: "198.19.0.10", host: "198.19.0.11", direct: false),
        Exception(noProxy: "198.19.0.0/24", host: "198.19.0.200", direct: true),
        Exception(noProxy: "198.19.0.0/24", host: "198.19.1.1", direct: false),
        Exception(noProxy: "198.19.0.0/15", host: "198.18.255.1", direct: true),
        Exception(noProxy: "198.19.0.0/24", host: "db.test", direct: false),
        Exception(noProxy: "2001:db8::/32", host: "[2001:db8:5::81]", direct: true),
        Exception(noProxy: "2001:db8::/32", host: "[2001:db9::1]", direct: false),
        Exception(noProxy: "[2001:db8::1]", host: "[2001:db8::1]", direct: true),
        Exception(noProxy: "2001:db8::/32", host: "198.19.0.1", direct: false),
        // An entry that matches nothing is ignored, never refused.
        Exception(noProxy: "198.19.0.0/99,api.test", host: "198.19.0.1", direct: false),
        Exception(noProxy: "198.19.0.0/99,api.test", host: "api.test", direct: true),
    ]

    @Test(arguments: exceptions) func noProxyIsMatchedAsCurlMatchesIt(_ test: Exception) throws {
        let environment = ["http_proxy": "http://198.18.0.1:3128", "no_proxy": test.noProxy]
        let choice = try ProxyChoice.resolve(option: nil, environment: environment)
        let proxy = choice.proxy(for: try Self.url("http://\(test.host):8080/health"))
        #expect((proxy == nil) == test.direct)
    }

    @Test func uppercaseNoProxyCountsAndLowercaseWins() throws {
        var environment = ["http_proxy": "http://198.18.0.1:3128", "NO_PROXY": "api.test"]
        #expect(
            try ProxyChoice.resolve(option: nil, environment: environment).proxy(for: Self.url("http://api.test/"))
                == nil)
        environment["no_proxy"] = "other.test"
        #expect(
            try ProxyChoice.resolve(option: nil, environment: environment).proxy(for: Self.url("http://api.test/"))
                != nil)
    }

    @Test func theOptionOverridesTheEnvironmentAndNoProxy() throws {
        let environment = ["http_proxy": "http://198.18.0.1:3128", "no_proxy": "*"]
        let one = try ProxyChoice.resolve(option: "http://[2001:db8::3]:8888", environment: environment)
        #expect(one.proxy(for: try Self.url("http://api.test/"))?.shown == "http://[2001:db8::3]:8888")
        #expect(one.proxy(for: try Self.url("https://api.test/"))?.shown == "http://[2001:db8::3]:8888")
        for none in ["none", "NONE", " none "] {
            let ignored = try ProxyChoice.resolve(option: none, environment: environment)
            #expect(ignored.proxy(for: try Self.url("http://api.test/")) == nil)
        }
    }

    @Test func theOptionNeedsItsSchemeWhereAVariableMayLeaveItOut() throws {
        for option in ["garbage", "proxy.test:3128", "198.18.0.1"] {
            #expect(throws: ProxyChoiceError.self, "\(option)") {
                try ProxyChoice.resolve(option: option, environment: [:])
            }
            let variable = try ProxyChoice.resolve(option: nil, environment: ["http_proxy": option])
            #expect(variable.proxy(for: try Self.url("http://api.test/")) != nil, "\(option)")
        }
    }

    @Test(arguments: [
        ("http://user:s3cret@proxy.test:3128", "http://***@proxy.test:3128"),
        ("user:s3cret@proxy.test:3128", "***@proxy.test:3128"),
        ("http://us@er:s3c@ret@proxy.test", "http://***@proxy.test"),
        ("http://proxy.test:99999", "http://proxy.test:99999"),
    ])
    func aQuotedProxyURLLeavesItsCredentialsOut(_ text: String, _ shown: String) {
        #expect(ProxyURL.redacted(text) == shown)
        #expect(ProxyChoiceError(source: "http_proxy", text: text, problem: .invalidPort).description.contains(shown))
    }

    @Test func theChoiceReadsWithoutCredentials() throws {
        #expect("\(try ProxyChoice.resolve(option: "none", environment: [:]))" == "none")
        #expect("\(try ProxyChoice.resolve(option: nil, environment: [:]))" == "none")
        #expect(
            "\(try ProxyChoice.resolve(option: "http://u:pw@198.18.0.1", environment: [:]))" == "http://198.18.0.1:1080"
        )
        let environment = ["HTTPS_PROXY": "u:pw@proxy.test:3128", "all_proxy": "http://all.test:1", "no_proxy": ".svc"]
        #expect(
            "\(try ProxyChoice.resolve(option: nil, environment: environment))"
                == "https=http://proxy.test:3128 all=http://all.test:1 no_proxy")
    }

    @Test func onlyUnpinnedWebChecksTakeAProxy() throws {
        let choice = try ProxyChoice.resolve(option: "http://198.18.0.1:3128", environment: [:])
        for url in ["tcp://api.test:443", "host://api.test", "icmp://api.test"] {
            #expect(choice.proxy(for: try Self.url(url)) == nil, "\(url)")
        }
        #expect(choice.proxy(for: try Self.url("https://api.test/"), via: .pinned(to: "wan0")) == nil)
        #expect(choice.proxy(for: try Self.url("https://api.test/"), via: .kernelChoice) != nil)
    }

    @Test func credentialsAreDecodedAndNeverShown() throws {
        let proxy = try ProxyURL.parse("http://us%40er:p%3Ass@w@proxy.test:3128").get()
        #expect(proxy.username == "us@er")
        #expect(proxy.password == "p:ss@w")
        #expect(proxy.host == "proxy.test")
        #expect(proxy.port == 3128)
        #expect(proxy.shown == "http://proxy.test:3128")
        #expect("\(proxy)" == "http://proxy.test:3128")
        #expect(proxy.authority == "proxy.test:3128")
        let userOnly = try ProxyURL.parse("http://user@198.18.0.1").get()
        #expect(userOnly.username == "user")
        #expect(userOnly.password == nil)
        #expect(userOnly.literal == IPAddress("198.18.0.1"))
        #expect(userOnly.port == 1080)
    }

    struct Refused: Sendable, CustomTestStringConvertible {
        var text: String
        var problem: ProxyURL.Problem
        var testDescription: String { text }
    }

    static let refused: [Refused] = [
        Refused(text: "socks5://198.18.0.1:1080", problem: .unsupportedScheme),
        Refused(text: "https://proxy.test:3128", problem: .unsupportedScheme),
        Refused(text: "http://", problem: .missingHost),
        Refused(text: "http://:3128", problem: .missingHost),
        Refused(text: "http://proxy test:3128", problem: .invalidHost),
        Refused(text: "http://2001:db8::1:3128", problem: .invalidHost),
        Refused(text: "http://[proxy.test]:3128", problem: .invalidHost),
        Refused(text: "http://proxy.test:0", problem: .invalidPort),
        Refused(text: "http://proxy.test:65536", problem: .invalidPort),
        Refused(text: "http://proxy.test:http", problem: .invalidPort),
        Refused(text: "http://proxy.test:3128/path", problem: .unexpectedPath),
        Refused(text: "http://user:pa%zzss@proxy.test:3128", problem: .invalidCredentials),
        Refused(text: "http://user:pa%4@proxy.test:3128", problem: .invalidCredentials),
        Refused(text: "http://user:pa%FFss@proxy.test:3128", problem: .invalidCredentials),
    ]

    @Test(arguments: refused) func aProxyURLReachdCannotUseIsRefused(_ test: Refused) {
        guard case .failure(let problem) = ProxyURL.parse(test.text) else {
            Issue.record("\(test.text) was taken")
            return
        }
        #expect(problem == test.problem)
    }

    @Test func aRefusedVariableIsNamedAndItsPasswordNeverQuoted() {
        let environment = ["https_proxy": "socks5://user:s3cret@198.18.0.1:1080"]
        #expect(
            throws: ProxyChoiceError(
                source: "https_proxy", text: "socks5://***@198.18.0.1:1080", problem: .unsupportedScheme)
        ) {
            try ProxyChoice.resolve(option: nil, environment: environment)
        }
        do {
            _ = try ProxyChoice.resolve(option: "http://user:s3cret@proxy.test:99999", environment: [:])
            Issue.record("taken")
        } catch {
            #expect(error.source == nil)
            #expect(error.problem == .invalidPort)
            #expect(!"\(error)".contains("s3cret"))
        }
        // --proxy none ignores a variable reachd could not use.
        #expect(throws: Never.self) { try ProxyChoice.resolve(option: "none", environment: environment) }
    }

    private static func url(_ text: String) throws -> TargetURL {
        try TargetSpec.parse("t=\(text)").url
    }
}
