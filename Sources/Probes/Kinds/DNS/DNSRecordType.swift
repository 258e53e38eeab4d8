public import Reachable

/// The record types a `dns://` target asks for (`?type=`), and what of a record `expect`
/// compares: an address, a name (an `MX` or `SRV` record's target, an `SOA` record's primary
/// server) or a text (a `TXT` record's strings joined).
public enum DNSRecordType: String, Sendable, Hashable, CaseIterable {
    case a = "A"
    case aaaa = "AAAA"
    case cname = "CNAME"
    case mx = "MX"
    case ns = "NS"
    case ptr = "PTR"
    case soa = "SOA"
    case srv = "SRV"
    case txt = "TXT"

    /// The type's number on the wire (RFC 1035, 3596, 2782).
    public var number: UInt16 {
        switch self {
        case .a: 1
        case .ns: 2
        case .cname: 5
        case .soa: 6
        case .ptr: 12
        case .mx: 15
        case .txt: 16
        case .aaaa: 28
        case .srv: 33
        }
    }

    /// The type written in `?type=`, in any case.
    init?(written: some StringProtocol) {
        self.init(rawValue: written.uppercased())
    }
}

/// The value of one record that `expect` compares, normalised so that equal values are equal:
/// an address as an address (`2001:DB8:0::1` is `2001:db8::1`), a name in lower case without
/// its final dot, a text as it is.
public enum DNSValue: Sendable, Hashable, Comparable, CustomStringConvertible {
    case address(IPAddress)
    case name(String)
    case text(String)

    /// A name as compared: lower case (ASCII), no final dot.
    static func name(normalising written: String) -> DNSValue {
        .name((written.hasSuffix(".") ? String(written.dropLast()) : written).lowercased())
    }

    /// `expect`'s value for `type`, or `nil` when it cannot be one (`type=A&expect=notanip`).
    static func expected(_ written: String, for type: DNSRecordType) -> DNSValue? {
        switch type {
        case .a, .aaaa:
            guard let address = IPAddress(written), address.isIPv6 == (type == .aaaa) else { return nil }
            return .address(address)
        case .cname, .mx, .ns, .ptr, .soa, .srv:
            return HostName.isValid(written) ? .name(normalising: written) : nil
        case .txt:
            return .text(written)
        }
    }

    /// In a failure's detail: a text in quotes, so that its spaces and commas read as its own.
    public var description: String {
        switch self {
        case .address(let address): address.description
        case .name(let name): name
        case .text(let text): "\"\(text)\""
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.description < rhs.description }
}
