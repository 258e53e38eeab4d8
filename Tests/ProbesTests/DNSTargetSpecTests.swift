import Reachable
import Testing

@testable import Probes

/// `dns://SERVER[:PORT]/NAME[?type=T][&expect=V]` specs: what is taken, and every refusal, each
/// naming the spec.
@Suite struct DNSTargetSpecTests {
    struct Accepted: Sendable, CustomTestStringConvertible {
        var spec: String
        var server: String
        var port: UInt16
        var name: String
        var type: DNSRecordType
        var expected: DNSValue?
        var testDescription: String { spec }
    }

    static let accepted: [Accepted] = [
        Accepted(spec: "c=dns://198.18.0.1/db.test", server: "198.18.0.1", port: 53, name: "db.test", type: .a),
        Accepted(
            spec: "c=dns://198.18.0.1/db.test.?expect=198.18.0.8", server: "198.18.0.1", port: 53, name: "db.test.",
            type: .a, expected: .address(IPAddress("198.18.0.8")!)),
        Accepted(
            spec: "c=dns://[2001:db8::53]:5353/db.test?type=aaaa&expect=2001:DB8:0::1", server: "2001:db8::53",
            port: 5353, name: "db.test", type: .aaaa, expected: .address(IPAddress("2001:db8::1")!)),
        Accepted(
            spec: "c=dns://198.18.0.1/_sip._tcp.db.test?type=SRV&expect=Sip.DB.test.", server: "198.18.0.1",
            port: 53, name: "_sip._tcp.db.test", type: .srv, expected: .name("sip.db.test")),
        Accepted(
            spec: "c=dns://198.18.0.1/db.test?expect=v%3Dspf1%20-all&type=TXT", server: "198.18.0.1", port: 53,
            name: "db.test", type: .txt, expected: .text("v=spf1 -all")),
        Accepted(
            spec: "c=dns://198.18.0.1/8.0.18.198.in-addr.arpa?type=PTR", server: "198.18.0.1", port: 53,
            name: "8.0.18.198.in-addr.arpa", type: .ptr),
        Accepted(
            spec: "c=dns://198.18.0.1/db.test?type=MX&expect=mail.db.test", server: "198.18.0.1", port: 53,
            name: "db.test", type: .mx, expected: .name("mail.db.test")),
        Accepted(
            spec: "c=dns://198.18.0.1/db.test?type=SOA", server: "198.18.0.1", port: 53, name: "db.test", type: .soa),
        Accepted(
            spec: "c=dns://198.18.0.1/db.test?type=NS", server: "198.18.0.1", port: 53, name: "db.test", type: .ns),
        Accepted(
            spec: "c=dns://198.18.0.1/www.db.test?type=CNAME", server: "198.18.0.1", port: 53, name: "www.db.test",
            type: .cname),
    ]

    @Test(arguments: accepted)
    func acceptedSpecs(_ case: Accepted) throws {
        let spec = try TargetSpec.parse(`case`.spec)
        #expect(spec.url.scheme == .dns)
        #expect(spec.url.literal == IPAddress(`case`.server))
        #expect(spec.url.port == `case`.port)
        #expect(spec.url.requestURL == nil, "not a curl transfer")
        #expect(spec.text == `case`.spec, "reads back as written")
        let query = try DNSTargetQuery.parse(spec.url.path).get()
        #expect(query.name == `case`.name)
        #expect(query.type == `case`.type)
        #expect(query.expected == `case`.expected)
    }

    struct Refused: Sendable, CustomTestStringConvertible {
        var spec: String
        var words: String
        var testDescription: String { spec }
    }

    static let refused: [Refused] = [
        Refused(spec: "c=dns://ns.test/db.test", words: "the server must be an IP address"),
        Refused(spec: "c=dns://2001:db8::53/db.test", words: "IPv6 goes in brackets"),
        Refused(spec: "c=dns://198.18.0.1/db.test?type=AXFR", words: "unknown type \"AXFR\""),
        Refused(spec: "c=dns://198.18.0.1/db.test?type=", words: "unknown type \"\""),
        Refused(spec: "c=dns://198.18.0.1:0/db.test", words: "the port must be a number"),
        Refused(spec: "c=dns://198.18.0.1:65536/db.test", words: "the port must be a number"),
        Refused(spec: "c=dns://198.18.0.1/", words: "needs a name"),
        Refused(spec: "c=dns://198.18.0.1", words: "needs a name"),
        Refused(spec: "c=dns://198.18.0.1?type=A", words: "needs a name"),
        Refused(spec: "c=dns://198.18.0.1/db..test", words: "is not a DNS name"),
        Refused(spec: "c=dns://198.18.0.1/db.test/x", words: "is not a DNS name"),
        Refused(spec: "c=dns://198.18.0.1/db.test?class=IN", words: "unknown query parameter \"class\""),
        Refused(spec: "c=dns://198.18.0.1/db.test?type=A&type=MX", words: "type is given twice"),
        Refused(spec: "c=dns://198.18.0.1/db.test?type=A&expect=notanip", words: "is not an IPv4 address"),
        Refused(spec: "c=dns://198.18.0.1/db.test?type=AAAA&expect=198.18.0.1", words: "is not an IPv6 address"),
        Refused(spec: "c=dns://198.18.0.1/db.test?expect=2001:db8::1", words: "is not an IPv4 address"),
        Refused(spec: "c=dns://198.18.0.1/db.test?type=MX&expect=a%20b", words: "is not a DNS name"),
        Refused(spec: "c=dns://198.18.0.1/db.test?type=TXT&expect=%zz", words: "expect needs a value"),
        Refused(spec: "c=dns://198.18.0.1/db.test?type=TXT&expect=%C3", words: "expect needs a value"),
        Refused(spec: "c=dns://198.18.0.1/db.test?expect=", words: "expect needs a value"),
        Refused(spec: "c=dns://198.18.0.1/db.test#x", words: "a fragment"),
        Refused(spec: "c=dns://u@198.18.0.1/db.test", words: "credentials"),
    ]

    @Test(arguments: refused)
    func refusedSpecs(_ case: Refused) {
        #expect {
            _ = try TargetSpec.parse(`case`.spec)
        } throws: { error in
            let description = String(describing: error)
            return description.contains("\"\(`case`.spec)\"") && description.contains(`case`.words)
        }
    }

    @Test func dnsIsListedAmongTheSchemes() {
        #expect(ProbeKinds.schemes.contains(.dns))
        #expect(ProbeKinds.schemeList.contains("dns://"))
    }
}
