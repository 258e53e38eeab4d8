public import Reachable

/// What a target (or the connectivity check) probes, parsed from its URL.
///
/// Parsed by hand, not by Foundation's `URL`: the forms are few and strict (the URL table in docs/probes.md), every
/// refusal needs its own message, and `host://` and `tcp://` are not URLs Foundation validates usefully.
public struct TargetURL: Sendable, Hashable, CustomStringConvertible {
    public enum Scheme: String, Sendable, Hashable {
        /// The name resolves and the kernel has a route: DNS only.
        case host
        /// And a TCP handshake completes.
        case tcp
        /// And a GET answers 200–399.
        case http
        case https
    }

    public let scheme: Scheme
    /// A host name or an IP literal, without brackets.
    public let host: String
    /// Set when `host` is an IP literal: it needs no DNS.
    public let literal: IPAddress?
    /// The port to connect to (`http` 80 and `https` 443 when not written); `nil` for `host://`.
    public let port: UInt16?
    /// The request target for `http`/`https` (`/` when not written, query included); empty otherwise.
    public let path: String
    /// The URL as the operator wrote it: what the status document shows.
    public let text: String

    public var description: String { text }

    /// The URL libcurl is given: `http`/`https` as written (normalised), and for `tcp` an `http://`
    /// URL that the engine only connects to (`CURLOPT_CONNECT_ONLY`). `nil` for `host://`.
    public var requestURL: String? {
        guard let port else { return nil }
        let authority = "\(literal?.urlHost ?? host):\(port)"
        switch scheme {
        case .host: return nil
        case .tcp: return "http://\(authority)/"
        case .http, .https: return "\(scheme.rawValue)://\(authority)\(path)"
        }
    }

    /// Parses one URL.
    ///
    /// - Parameters:
    ///   - text: the URL as given.
    ///   - allowed: the schemes this option takes (targets: all four; connectivity: `http`, `https`).
    /// - Returns: the parsed URL, or the problem; the caller wraps it into a `SpecError` that names the
    ///   whole spec.
    static func parse(_ text: String, allowed: Set<Scheme>) -> Result<TargetURL, SpecError.Problem> {
        guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://"),
            let scheme = Scheme(rawValue: text[..<colon].lowercased()), allowed.contains(scheme)
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

        var port: UInt16?
        if let portPart {
            guard let number = HostSyntax.port(portPart) else { return .failure(.invalidPort) }
            port = number
        }
        var path = ""
        switch scheme {
        case .host:
            if port != nil { return .failure(.unexpectedPort) }
            if !remainder.isEmpty, remainder != "/" { return .failure(.unexpectedPath) }
        case .tcp:
            if port == nil { return .failure(.missingPort) }
            if !remainder.isEmpty, remainder != "/" { return .failure(.unexpectedPath) }
        case .http, .https:
            if port == nil { port = scheme == .http ? 80 : 443 }
            path = remainder.hasPrefix("/") ? remainder : "/" + remainder
            if !HostSyntax.isSafePath(path) { return .failure(.invalidPath) }
        }
        let url = TargetURL(
            scheme: scheme, host: String(hostPart), literal: literal, port: port, path: path, text: text)
        if let requestURL = url.requestURL, scheme != .tcp, !CurlURLCheck.accepts(requestURL) {
            return .failure(.invalidPath)
        }
        return .success(url)
    }
}
