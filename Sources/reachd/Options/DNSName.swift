import Reachable

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
        HostName.isValid(text)
    }
}
