/// The syntax of a name for `--dns-check`: what a nameserver can be asked for as given, with no
/// search list. Checked at start so that a typo is refused with the option's name rather than
/// reported later as every server `failing`.
enum DNSName {
    /// What `isValid` accepts, as the refusal says it.
    static let rule =
        "must be a DNS name: dot-separated labels of 1-63 letters, digits, '-' or '_', at most 253 characters, optionally one trailing dot"

    /// Labels of 1–63 ASCII letters, digits, `-` or `_` (service names such as `_dns._udp`), at
    /// most 253 characters without the optional single trailing dot (RFC 1035's limit on the
    /// wire, 255 octets, in its text form).
    static func isValid(_ text: String) -> Bool {
        var name = Substring(text)
        if name.hasSuffix(".") { name = name.dropLast() }
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
