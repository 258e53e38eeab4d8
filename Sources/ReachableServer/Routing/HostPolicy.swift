import Reachable

/// `--allowed-hosts`: the names, besides those always allowed (`HostCheck`), under which reachd
/// answers. A page whose own name was rebound to reachd's address sends that name in `Host`; a
/// name on no list is answered `421`, so such a page reads nothing.
public enum HostPolicy: Sendable, Equatable, CustomStringConvertible {
    /// `*`: every `Host` (the check is off), for a proxy that sends names of its own.
    case any
    /// The built-in names plus these patterns.
    case names([HostPattern])

    /// Only the built-in names: the default.
    public static let builtIn = HostPolicy.names([])

    /// `*`, or patterns separated by commas, each a host name or `*.` and a name.
    public static func parse(_ text: String) -> Result<HostPolicy, InvalidHostPattern> {
        let items = text.split(separator: ",", omittingEmptySubsequences: false).map(\.trimmed)
        if items == ["*"] { return .success(.any) }
        var patterns: [HostPattern] = []
        for item in items {
            switch HostPattern.parse(item) {
            case .success(let pattern): patterns.append(pattern)
            case .failure(let refused): return .failure(refused)
            }
        }
        return .success(.names(patterns))
    }

    public var description: String {
        switch self {
        case .any: "*"
        case .names(let patterns): patterns.map(\.description).joined(separator: ",")
        }
    }
}

/// One pattern of `--allowed-hosts`: a name (`reachd.example.org`) or every name under one
/// (`*.example.org`, which does not match `example.org` itself).
public struct HostPattern: Sendable, Equatable, CustomStringConvertible {
    /// Lowercase, without a trailing dot.
    let name: String
    let coversSubdomains: Bool

    func matches(_ host: String) -> Bool {
        coversSubdomains ? host.hasSuffix("." + name) : host == name
    }

    public var description: String { coversSubdomains ? "*." + name : name }

    static func parse(_ text: String) -> Result<HostPattern, InvalidHostPattern> {
        func refused(_ why: String) -> Result<HostPattern, InvalidHostPattern> {
            .failure(InvalidHostPattern(text: text, why: why))
        }
        if text.isEmpty { return refused("is empty") }
        if text == "*" { return refused("cannot be combined with others (`*` alone turns the check off)") }
        let coversSubdomains = text.hasPrefix("*.")
        let rest = coversSubdomains ? text.dropFirst(2) : Substring(text)
        if rest.contains("*") { return refused("has `*` other than at its start (write *.example.org)") }
        if rest.contains("://") { return refused("is a URL (give the host name alone)") }
        if rest.contains(":") || rest.hasPrefix("[") {
            return refused(
                "has a port or is an IPv6 address (names are compared without the port; IP addresses are always allowed)"
            )
        }
        if rest.hasPrefix(".") { return refused("starts with a dot (write *.example.org for the names under it)") }
        guard let name = HostHeader.normalisedName(rest) else {
            return refused("is not a host name (letters, digits, - and _ in labels separated by dots)")
        }
        return .success(HostPattern(name: name, coversSubdomains: coversSubdomains))
    }
}

public struct InvalidHostPattern: Error, Sendable, CustomStringConvertible {
    public var text: String
    public var why: String
    public var description: String { "host pattern \"\(text)\" \(why)" }
}
