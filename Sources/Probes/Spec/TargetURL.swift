public import Reachable

/// What a target (or the connectivity check) probes, parsed from its URL.
///
/// Parsed by hand, not by Foundation's `URL`: the forms are few and strict (the URL table in docs/probes.md), every
/// refusal needs its own message, and `host://` and `tcp://` are not URLs Foundation validates usefully.
public struct TargetURL: Sendable, Hashable, CustomStringConvertible {
    /// A URL scheme, lower case; each `ProbeKind` declares its own (`.tcp` in `TCPProbe.swift`).
    public struct Scheme: RawRepresentable, Sendable, Hashable, ExpressibleByStringLiteral {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { rawValue = value }
    }

    public let scheme: Scheme
    /// A host name or an IP literal, without brackets.
    public let host: String
    /// Set when `host` is an IP literal: it needs no DNS.
    public let literal: IPAddress?
    /// The port to connect to (`http` 80, `https` 443, `dns` 53 when not written); `nil` for `host://`.
    public let port: UInt16?
    /// The request target for `http`/`https` (`/` when not written, query included), the query
    /// for `dns` (`/NAME?type=MX`); empty otherwise.
    public let path: String
    /// The URL as the operator wrote it: what the status document shows.
    public let text: String

    public var description: String { text }

    /// The kind that probes it (its scheme's, registered in `ProbeKinds`).
    public var kind: any ProbeKind.Type { ProbeKinds.kind(for: scheme)! }

    /// `HOST:PORT` for a URL (brackets around an IPv6 literal); `nil` without a port.
    public var authority: String? { port.map { "\(literal?.urlHost ?? host):\($0)" } }

    /// The URL libcurl is given, for the kinds that probe through it (`CurlProbeKind`; `nil` for
    /// the others).
    public var requestURL: String? { (kind as? any CurlProbeKind.Type)?.requestURL(of: self) }

    /// Parses one URL.
    ///
    /// - Parameters:
    ///   - text: the URL as given.
    ///   - allowed: the schemes this option takes (targets: every kind's; connectivity: `http`, `https`).
    /// - Returns: the parsed URL, or the problem; the caller wraps it into a `SpecError` that names the
    ///   whole spec.
    static func parse(_ text: String, allowed: Set<Scheme>) -> Result<TargetURL, SpecError.Problem> {
        guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://"),
            case let scheme = Scheme(rawValue: text[..<colon].lowercased()), allowed.contains(scheme),
            let kind = ProbeKinds.kind(for: scheme)
        else { return .failure(.unsupportedScheme) }
        let rest = text[text.index(colon, offsetBy: 3)...]
        let authorityEnd =
            rest.firstIndex { character in
                character == "/" || character == "?" || character == "#"
            } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let remainder = String(rest[authorityEnd...])
        if authority.contains("@") { return .failure(.credentials) }

        let hostPart: Substring
        let portPart: Substring?
        switch HostSyntax.split(authority) {
        case .failure(let problem): return .failure(problem)
        case .success(let split): (hostPart, portPart) = split
        }
        if hostPart.isEmpty { return .failure(.missingHost) }
        let literal: IPAddress?
        switch HostSyntax.validate(hostPart, bracketed: authority.hasPrefix("[")) {
        case .failure(let problem): return .failure(problem)
        case .success(let address): literal = address
        }

        var written: UInt16?
        if let portPart {
            guard let number = HostSyntax.port(portPart) else { return .failure(.invalidPort) }
            written = number
        }
        let port: UInt16?
        let path: String
        switch kind.parts(scheme, port: written, remainder: remainder) {
        case .failure(let problem): return .failure(problem)
        case .success(let parts): (port, path) = parts
        }
        let url = TargetURL(
            scheme: scheme, host: String(hostPart), literal: literal, port: port, path: path, text: text)
        if let problem = kind.refusal(of: url) { return .failure(problem) }
        return .success(url)
    }
}
