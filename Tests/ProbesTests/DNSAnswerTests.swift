import Glibc
import Reachable
import Testing

@testable import Probes

/// A `dns://` target's judgement of one answer: reading the records (`DNSMessage`), comparing
/// them with `expect` (`DNSValue`), and the outcome with the contract's reason and detail.
@Suite struct DNSAnswerTests {
    /// A message as a nameserver sends it: one question for `name`, then `records`
    /// (type, data), the owner name a pointer to the question's.
    static func message(
        rcode: UInt8 = 0, name: String = "db.test", type: DNSRecordType = .a, records: [(UInt16, [UInt8])] = []
    ) -> [UInt8] {
        var bytes: [UInt8] = [0x12, 0x34, 0x81, 0x80 | rcode, 0, 1, 0, UInt8(records.count), 0, 0, 0, 0]
        bytes += encoded(name) + [UInt8(type.number >> 8), UInt8(type.number & 0xFF), 0, 1]
        for (recordType, data) in records {
            bytes += [0xC0, 12, UInt8(recordType >> 8), UInt8(recordType & 0xFF), 0, 1, 0, 0, 0, 0]
            bytes += [UInt8(data.count >> 8), UInt8(data.count & 0xFF)] + data
        }
        return bytes
    }

    static func encoded(_ name: String) -> [UInt8] {
        name.split(separator: ".").flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) } + [0]
    }

    static func address(_ text: String) -> [UInt8] { IPAddress(text)!.bytes }

    // MARK: - Reading

    @Test func everyTypeReadsAsTheValueExpectCompares() throws {
        let cases: [(DNSRecordType, [UInt8], DNSValue)] = [
            (.a, Self.address("198.18.0.8"), .address(IPAddress("198.18.0.8")!)),
            (.aaaa, Self.address("2001:db8::1"), .address(IPAddress("2001:db8::1")!)),
            (.cname, Self.encoded("Real.DB.test"), .name("real.db.test")),
            (.ns, Self.encoded("ns1.db.test"), .name("ns1.db.test")),
            (.ptr, Self.encoded("db.test"), .name("db.test")),
            (.mx, [0, 10] + Self.encoded("mail.db.test"), .name("mail.db.test")),
            (.srv, [0, 1, 0, 2, 0x13, 0xC4] + Self.encoded("sip.db.test"), .name("sip.db.test")),
            (
                .txt, [6] + Array("v=spf1".utf8) + [4] + Array(" -al".utf8) + [1, UInt8(ascii: "l")],
                .text("v=spf1 -all")
            ),
            (
                .soa, Self.encoded("ns1.db.test") + Self.encoded("admin.db.test") + [UInt8](repeating: 0, count: 20),
                .name("ns1.db.test")
            ),
        ]
        for (type, data, value) in cases {
            let message = try #require(DNSMessage(Self.message(type: type, records: [(type.number, data)]), type: type))
            #expect(message.rcode == 0)
            #expect(message.values == [value], "\(type)")
        }
    }

    @Test func aCNameOnTheWayIsNotARecordOfTheTypeAskedFor() throws {
        let bytes = Self.message(records: [(5, Self.encoded("real.db.test")), (1, Self.address("198.18.0.8"))])
        #expect(DNSMessage(bytes, type: .a)?.values == [.address(IPAddress("198.18.0.8")!)])
        let onlyCName = Self.message(type: .aaaa, records: [(5, Self.encoded("real.db.test"))])
        #expect(DNSMessage(onlyCName, type: .aaaa)?.values == [])
    }

    @Test func aNameCompressedIntoTheQuestionIsExpanded() throws {
        // MX target "mail" + pointer to the question's "db.test".
        let bytes = Self.message(type: .mx, records: [(15, [0, 10, 4] + Array("mail".utf8) + [0xC0, 12])])
        #expect(DNSMessage(bytes, type: .mx)?.values == [.name("mail.db.test")])
    }

    @Test func aCutOffOrLoopingMessageIsMalformed() {
        let whole = Self.message(records: [(1, Self.address("198.18.0.8"))])
        for length in [0, 5, 11, 20, whole.count - 1] {
            #expect(DNSMessage(Array(whole.prefix(length)), type: .a) == nil, "cut at \(length)")
        }
        #expect(DNSMessage(Self.message(records: [(1, [198, 18, 0])]), type: .a) == nil, "a 3-byte A record")
        let loop = Self.message(
            type: .cname, records: [(5, [0xC0, UInt8(12 + Self.encoded("db.test").count + 4 + 12)])])
        #expect(DNSMessage(loop, type: .cname) == nil, "a pointer to itself")
        let overrun = Self.message(type: .mx, records: [(15, [0, 10, 4] + Array("mail".utf8))])
        #expect(DNSMessage(overrun, type: .mx) == nil, "a name that runs past its record")
    }

    // MARK: - Expect

    @Test func expectComparesNamesWithoutCaseOrFinalDotAndAddressesAsAddresses() {
        #expect(DNSValue.expected("Mail.DB.test.", for: .mx) == .name("mail.db.test"))
        #expect(DNSValue.expected("2001:DB8:0::1", for: .aaaa) == .address(IPAddress("2001:db8::1")!))
        #expect(DNSValue.expected("198.18.0.8", for: .a) == .address(IPAddress("198.18.0.8")!))
        #expect(DNSValue.expected("198.18.0.8", for: .aaaa) == nil)
        #expect(DNSValue.expected("2001:db8::1", for: .a) == nil)
        #expect(DNSValue.expected("notanip", for: .a) == nil)
        #expect(DNSValue.expected("not a name", for: .cname) == nil)
        #expect(DNSValue.expected("Any Text, As It Is", for: .txt) == .text("Any Text, As It Is"))
        #expect(DNSValue.expected("v=spf1", for: .txt) != .text("V=SPF1"), "a text keeps its case")
    }

    // MARK: - Outcome

    static let server = IPAddress("198.18.0.1")!

    static func answer(_ bytes: [UInt8]?, failure: DNSFailureReason? = nil, socketError: Int32 = 0)
        -> NameserverAnswer
    {
        NameserverAnswer(server: server, failure: failure, message: bytes, socketError: socketError)
    }

    static func query(_ type: DNSRecordType = .a, expect: String? = nil) -> DNSTargetQuery {
        DNSTargetQuery(name: "db.test", type: type, expected: expect.flatMap { DNSValue.expected($0, for: type) })
    }

    @Test func answersThatAreNotTheOneWantedAreDNSWithTheContractsWords() {
        let cases: [(NameserverAnswer, DNSTargetQuery, String)] = [
            (Self.answer(Self.message(rcode: 3)), Self.query(), "NXDOMAIN from 198.18.0.1"),
            (Self.answer(Self.message(rcode: 2), failure: .servfail), Self.query(), "SERVFAIL"),
            (Self.answer(Self.message(rcode: 5), failure: .refused), Self.query(), "REFUSED"),
            (Self.answer(Self.message(rcode: 4)), Self.query(), "NOTIMP"),
            (Self.answer(Self.message(type: .aaaa)), Self.query(.aaaa), "no AAAA records"),
            (
                Self.answer(Self.message(records: [(1, Self.address("198.18.0.9"))])),
                Self.query(expect: "198.18.0.8"), "198.18.0.9, expected 198.18.0.8"
            ),
            (
                Self.answer(Self.message(type: .txt, records: [(16, [2] + Array("hi".utf8))])),
                Self.query(.txt, expect: "bye"), "\"hi\", expected \"bye\""
            ),
        ]
        for (answer, query, detail) in cases {
            let outcome = DNSProbe.outcome(of: answer, for: query)
            #expect(outcome.failure == .dns, "\(detail)")
            #expect(outcome.detail == detail)
        }
    }

    @Test func theRecordsWantedSucceed() {
        let two = Self.message(records: [(1, Self.address("198.18.0.9")), (1, Self.address("198.18.0.8"))])
        #expect(DNSProbe.outcome(of: Self.answer(two), for: Self.query()).succeeded)
        #expect(DNSProbe.outcome(of: Self.answer(two), for: Self.query(expect: "198.18.0.8")).succeeded)
        let mx = Self.message(type: .mx, records: [(15, [0, 10] + Self.encoded("MAIL.db.test"))])
        #expect(DNSProbe.outcome(of: Self.answer(mx), for: Self.query(.mx, expect: "mail.db.test.")).succeeded)
    }

    @Test func manyValuesAreListedSortedAndCut() {
        let values = ["198.18.0.5", "198.18.0.3", "198.18.0.4", "198.18.0.2", "198.18.0.3"].map {
            DNSValue.address(IPAddress($0)!)
        }
        #expect(DNSProbe.listed(values) == "198.18.0.2, 198.18.0.3, 198.18.0.4 and 1 more")
        let long = DNSValue.text(String(repeating: "x", count: 300))
        #expect(DNSProbe.listed([long]) == "\"" + String(repeating: "x", count: 99) + "…")
    }

    @Test func noAnswerIsTheSocketsReason() {
        let cases: [(NameserverAnswer, ProbeFailureReason)] = [
            (Self.answer(nil, failure: .timeout), .timeout),
            (Self.answer(nil, failure: .refused, socketError: ECONNREFUSED), .refused),
            (Self.answer(nil, failure: .refused, socketError: EHOSTUNREACH), .hostUnreachable),
            (Self.answer(nil, failure: .refused, socketError: ENETUNREACH), .hostUnreachable),
            (Self.answer(nil, failure: .error), .error),
        ]
        for (answer, reason) in cases {
            #expect(DNSProbe.outcome(of: answer, for: Self.query()).failure == reason)
        }
        #expect(
            DNSProbe.outcome(of: Self.answer([1, 2, 3]), for: Self.query()).detail
                == "a malformed answer from 198.18.0.1")
    }
}
