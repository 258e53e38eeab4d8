import Reachable

/// What a `dns://SERVER[:PORT]/NAME[?type=T][&expect=V]` target asks: NAME's records of type T
/// (`A` when not written), and — with `expect` — the value one of them must have.
public struct DNSTargetQuery: Sendable, Hashable {
    /// Asked exactly as written, without its final dot stripped (no search list either way).
    public var name: String
    public var type: DNSRecordType
    /// The value one record must have, normalised (`DNSValue.expected`).
    public var expected: DNSValue?

    /// Reads what follows a `dns://` URL's authority: `/NAME`, then an optional query of `type`
    /// and `expect` (each at most once, `expect` percent-decoded).
    static func parse(_ remainder: String) -> Result<DNSTargetQuery, SpecError.Problem> {
        func refuse(_ words: String) -> Result<DNSTargetQuery, SpecError.Problem> { .failure(.kindRule(words)) }
        guard HostSyntax.isSafePath(remainder), !remainder.contains("#") else {
            return refuse("the URL has spaces, control characters or a fragment ('#')")
        }
        guard remainder.hasPrefix("/") else { return refuse("dns:// needs a name to ask for (dns://SERVER/NAME)") }
        let pathEnd = remainder.firstIndex(of: "?") ?? remainder.endIndex
        let name = remainder[remainder.index(after: remainder.startIndex)..<pathEnd]
        if name.isEmpty { return refuse("dns:// needs a name to ask for (dns://SERVER/NAME)") }
        guard HostName.isValid(name) else { return refuse("\"\(name)\" is not a DNS name") }

        var typeText: Substring?
        var expectText: Substring?
        if pathEnd < remainder.endIndex {
            for parameter in remainder[remainder.index(after: pathEnd)...].split(
                separator: "&", omittingEmptySubsequences: false)
            {
                let equals = parameter.firstIndex(of: "=") ?? parameter.endIndex
                let key = parameter[..<equals]
                let value = equals < parameter.endIndex ? parameter[parameter.index(after: equals)...] : ""
                switch key {
                case "type":
                    if typeText != nil { return refuse("type is given twice") }
                    typeText = value
                case "expect":
                    if expectText != nil { return refuse("expect is given twice") }
                    expectText = value
                default:
                    return refuse("unknown query parameter \"\(key)\" (dns:// takes type and expect)")
                }
            }
        }
        var type = DNSRecordType.a
        if let typeText {
            guard let written = DNSRecordType(written: typeText) else {
                let types = DNSRecordType.allCases.map(\.rawValue).joined(separator: ", ")
                return refuse("unknown type \"\(typeText)\" (one of \(types))")
            }
            type = written
        }
        var expected: DNSValue?
        if let expectText {
            guard let decoded = PercentDecoding.decoded(expectText), !decoded.isEmpty else {
                return refuse("expect needs a value (percent-encoded where it must be)")
            }
            guard let value = DNSValue.expected(decoded, for: type) else {
                let what: String
                switch type {
                case .a: what = "an IPv4 address"
                case .aaaa: what = "an IPv6 address"
                case .txt: what = "a text"
                default: what = "a DNS name"
                }
                return refuse("expect \"\(decoded)\" is not \(what), as type \(type.rawValue) needs")
            }
            expected = value
        }
        return .success(DNSTargetQuery(name: String(name), type: type, expected: expected))
    }
}
