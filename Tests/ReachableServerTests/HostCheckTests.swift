import Reachable
import Testing

@testable import ReachableServer

/// The DNS rebinding check: which `Host` values are answered, and how `--allowed-hosts` reads.
struct HostCheckTests {
    private let builtIn = HostCheck(policy: .builtIn, hostName: "node-7.lab.example")

    @Test(arguments: [
        "127.0.0.1", "127.0.0.1:9478", "198.18.0.2:80", "10.0.0.1.", "[::1]", "[::1]:9478", "[2001:db8::2]:9478",
        "[::ffff:127.0.0.1]", "localhost", "localhost:9478", "LocalHost.", "reachd", "reachd:9478", "my-pod_1",
        "app.localhost", "reachd.monitoring.svc", "reachd.monitoring.svc:9478", "reachd.monitoring.svc.cluster.local",
        "REACHD.MONITORING.SVC.CLUSTER.LOCAL.:9478", "node-7.lab.example", "Node-7.Lab.Example.:9478",
        "", "127.0.0.1:", "127.0.0.1 ", " \tlocalhost:9478\t",
    ])
    func theBuiltInNamesAndEveryIPLiteralAreAnswered(host: String) {
        #expect(builtIn.allows(host: host))
    }

    @Test(arguments: [
        "rebind.example", "rebind.example:9478", "REBIND.example.", "localhost.example", "svc.example",
        "cluster.local", "example.localhostx", "svc.example.", "node-7.lab.example.evil",
        // Not names and not literals: a browser sends neither.
        "::1", "::1:9478", "[::1", "[::1]x", "[127.0.0.1]", "[::1]:http", "127.0.0.1:99999x", "127.0.0.1:123456",
        "a b", "a..b", ".", "..", "rebind.example..", "é.example", "a/b", "a@b",
    ])
    func otherNamesAreRefused(host: String) {
        #expect(!builtIn.allows(host: host))
    }

    /// The last value allowed is remembered, and only it: a refused value after it (or between
    /// two of it) is still refused, however often it comes.
    @Test func onlyTheLastAllowedValueIsRemembered() {
        let check = HostCheck(policy: .builtIn, hostName: nil)
        for _ in 0..<3 {
            #expect(check.allows(host: "127.0.0.1:9478"))
            #expect(!check.allows(host: "rebind.example:9478"))
            #expect(!check.allows(host: "127.0.0.1:9478x"))
        }
        #expect(check.allows(host: "reachd.monitoring.svc"))
        #expect(check.allows(host: "127.0.0.1:9478"))
        #expect(!check.allows(host: "rebind.example"))
    }

    @Test func theHostNameIsComparedWithoutCaseOrTrailingDot() {
        #expect(HostCheck.machineHostName() != nil, "gethostname gives a name here")
        let check = HostCheck(policy: .builtIn, hostName: HostHeader.normalisedName("Box.Example.ORG."))
        #expect(check.allows(host: "box.example.org:9478"))
        #expect(check.allows(host: "BOX.EXAMPLE.ORG."))
        #expect(!check.allows(host: "other.example.org"))
        #expect(!HostCheck(policy: .builtIn, hostName: nil).allows(host: "box.example.org"))
    }

    @Test func patternsAddNamesAndTheNamesUnderADomain() throws {
        let policy = try HostPolicy.parse(" reachd.example.org , *.Internal.Example. ").get()
        #expect(policy.description == "reachd.example.org,*.internal.example")
        let check = HostCheck(policy: policy, hostName: nil)
        #expect(check.allows(host: "reachd.example.org:9478"))
        #expect(check.allows(host: "REACHD.example.org."))
        #expect(check.allows(host: "a.internal.example"))
        #expect(check.allows(host: "a.b.internal.example:443"))
        #expect(!check.allows(host: "internal.example"), "*.x covers the names under x, not x")
        #expect(!check.allows(host: "xinternal.example"))
        #expect(!check.allows(host: "other.example.org"))
        #expect(check.allows(host: "127.0.0.1"), "the built-in names stay")
    }

    @Test func aStarTurnsTheCheckOff() throws {
        let policy = try HostPolicy.parse("*").get()
        #expect(policy == .any)
        #expect(HostCheck(policy: policy).allows(host: "rebind.example"))
        #expect(HostCheck(policy: policy).allows(host: "::garbage"))
    }

    @Test(arguments: [
        ("", "is empty"), ("a.example,,b.example", "is empty"), ("a.example,", "is empty"), (" ", "is empty"),
        ("a.example:8080", "port"), ("[::1]", "port"), ("a.*.example", "`*` other than at its start"),
        ("*example.org", "`*` other than at its start"), ("*.*.example", "`*` other than at its start"),
        ("*,a.example", "cannot be combined"), ("*.", "is not a host name"), (".example.org", "starts with a dot"),
        ("a..b", "is not a host name"), ("a b", "is not a host name"), ("é.example", "is not a host name"),
        ("https://a.example", "is a URL"),
    ])
    func badPatternsAreRefusedWithTheReason(text: String, why: String) {
        guard case .failure(let refused) = HostPolicy.parse(text) else {
            Issue.record("\(text.debugDescription) was accepted")
            return
        }
        #expect(refused.description.contains(why), "\(refused)")
    }

    @Test func everyHostFieldMustBeAllowed() {
        func request(_ hosts: [String]) -> HTTPRequest {
            HTTPRequest(
                method: "GET", path: "/status", version: "HTTP/1.1", headers: hosts.map { HTTPField("Host", $0) })
        }
        #expect(builtIn.allows(request([])), "no Host (HTTP/1.0) passes")
        #expect(builtIn.allows(request(["127.0.0.1:9478"])))
        #expect(!builtIn.allows(request(["127.0.0.1:9478", "rebind.example"])))
        #expect(
            !builtIn.allows(
                HTTPRequest(
                    method: "GET", path: "/", version: "HTTP/1.1", headers: [HTTPField("HOST", "rebind.example")])))
        #expect(HostCheck(policy: .any).allows(request(["rebind.example"])))
    }

    @Test func theHostFieldIsFoundInAnyCaseAndOnlyByItsWholeName() {
        for name in ["Host", "host", "HOST", "hOsT"] { #expect(HostCheck.isHostField(name), "\(name)") }
        for name in ["", "Hos", "Hosts", "X-Host", "Host ", "Hoſt", "Ho\u{0}t"] {
            #expect(!HostCheck.isHostField(name), "\(name.debugDescription)")
        }
    }

    /// The byte reader against every shape the rule names: a few hundred generated values
    /// compared with what the text rule (`HostName`, `IPAddress`) says of them.
    @Test func theByteReaderAgreesWithTheTextRules() {
        let hosts = ["a", "A.b", "127.0.0.1", "1.2.3", "01.2.3.4", "[::1]", "[fe80::1%eth0]", "x_y", "-a", "a-"]
        let ports = ["", ":", ":1", ":65535", ":123456", ":x"]
        let ends = ["", ".", "..", " ", "\t"]
        for host in hosts {
            for port in ports {
                for end in ends {
                    let value = host + end + port
                    #expect(HostHeader(value) == textRule(value), "\(value.debugDescription)")
                }
            }
        }
    }

    /// The rule as text, as it was read before the byte reader: the reference it must match.
    private func textRule(_ value: String) -> HostHeader {
        var rest = Substring(value.trimmed)
        if rest.isEmpty { return .empty }
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]"), isPort(rest[rest.index(after: close)...]),
                IPAddress(String(rest[rest.index(after: rest.startIndex)..<close]))?.isIPv6 == true
            else { return .malformed }
            return .ipLiteral
        }
        if let colon = rest.firstIndex(of: ":") {
            guard isPort(rest[colon...]) else { return .malformed }
            rest = rest[..<colon]
        }
        guard let name = HostHeader.normalisedName(rest) else { return .malformed }
        return IPAddress(name)?.isIPv6 == false ? .ipLiteral : .name(name)
    }

    private func isPort(_ text: Substring) -> Bool {
        guard let first = text.first else { return true }
        let digits = text.dropFirst()
        return first == ":" && digits.count <= 5 && digits.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }
}
