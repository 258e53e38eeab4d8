import Testing

@testable import ReachableServer

/// The rules on a request's header values (RFC 9112): one non-empty `Host` (HTTP/1.1), one
/// `Content-Length` however often repeated, never with `Transfer-Encoding`.
struct HeaderRulesTests {
    static func verdict(_ fields: [(String, String)], http10: Bool = false) -> String? {
        var rules = HeaderRules(isHTTP10: http10)
        for (name, value) in fields {
            let nameBytes = Array(name.utf8)
            let valueBytes = Array(value.utf8)
            nameBytes.withUnsafeBytes { name in
                valueBytes.withUnsafeBytes { value in rules.take(name: name, value: value) }
            }
        }
        return rules.verdict
    }

    @Test func aRequestWithOneHostPasses() {
        #expect(Self.verdict([("Host", "x")]) == nil)
        #expect(Self.verdict([("HOST", "x:1"), ("Accept", "*/*")]) == nil)
    }

    @Test func http11NeedsItsHostAndHttp10DoesNot() {
        #expect(Self.verdict([("Accept", "*/*")]) != nil)
        #expect(Self.verdict([], http10: true) == nil)
    }

    @Test(arguments: [
        [("Host", "")], [("Host", " \t ")], [("Host", "a"), ("host", "a")], [("Host", "a"), ("Host", "b")],
    ])
    func anEmptyOrSecondHostIsMalformed(fields: [(String, String)]) {
        #expect(Self.verdict(fields) != nil)
    }

    @Test(arguments: ["3", " 3 ", "3, 3", "003"])
    func oneLengthHoweverWrittenPasses(length: String) {
        #expect(Self.verdict([("Host", "x"), ("Content-Length", length), ("content-length", "3")]) == nil)
    }

    @Test(arguments: [("3", "4"), ("3, 4", "3"), ("3", ""), ("x", "3"), ("18446744073709551616", "0")])
    func lengthsThatDifferOrAreNoNumberAreMalformed(first: String, second: String) {
        #expect(Self.verdict([("Host", "x"), ("Content-Length", first), ("Content-Length", second)]) != nil)
    }

    @Test func aLengthWithTransferEncodingIsMalformed() {
        #expect(Self.verdict([("Host", "x"), ("Content-Length", "3"), ("Transfer-Encoding", "chunked")]) != nil)
        #expect(Self.verdict([("Host", "x"), ("Transfer-Encoding", "chunked")]) == nil)
    }
}
