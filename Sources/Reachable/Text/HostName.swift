/// The syntax of a DNS host name — one rule for every module: target hosts, `--dns-check`, the
/// `Host` header's names.
package enum HostName {
    /// What `isValid` accepts, as a refusal says it (`--dns-check`).
    package static let rule =
        "must be a DNS name: dot-separated labels of 1-63 letters, digits, '-' or '_', at most 253 characters, optionally one trailing dot"

    /// Labels of 1–63 ASCII letters, digits, `-` or `_` (service names such as `_dns._udp` exist),
    /// at most 253 characters without one optional trailing dot (RFC 1035's 255 octets on the wire,
    /// in its text form).
    package static func isValid(_ text: some StringProtocol) -> Bool {
        let whole = Substring(text)
        let name = whole.hasSuffix(".") ? whole.dropLast() : whole
        guard !name.isEmpty, name.utf8.count <= 253 else { return false }
        return name.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            (1...63).contains(label.utf8.count) && label.utf8.allSatisfy(isLabelByte)
        }
    }

    private static func isLabelByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default:
            false
        }
    }
}
