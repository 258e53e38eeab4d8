public import Reachable

/// An HTTP proxy an `http(s)://` check goes through (`--proxy`, `http_proxy`, …), with the
/// credentials it is given and never shows.
///
/// A class, not a struct: every target book holds the chosen proxy, and one shared reference is
/// 8 bytes a book where a copy of five fields was about 90 (docs/scale.md).
///
/// Its `description` is `shown`: a proxy interpolated into a log line, a detail or an error can
/// never carry the password.
public final class ProxyURL: Sendable, Hashable, CustomStringConvertible {
    /// A host name or an IP literal, without brackets: what reachd resolves and routes.
    public let host: String
    /// Set when `host` is an IP literal: it needs no DNS.
    public let literal: IPAddress?
    /// 1080 when the URL has none (curl's default).
    public let port: UInt16
    /// Percent-decoded; `nil` without credentials.
    public let username: String?
    public let password: String?

    /// curl's default proxy port.
    public static let defaultPort: UInt16 = 1080

    init(host: String, literal: IPAddress?, port: UInt16, username: String?, password: String?) {
        self.host = host
        self.literal = literal
        self.port = port
        self.username = username
        self.password = password
        shown = "http://\(literal?.urlHost ?? host):\(port)"
    }

    /// `198.18.0.1:3128`, `[2001:db8::1]:3128`: how a failure's detail names it.
    public var authority: String { "\(literal?.urlHost ?? host):\(port)" }

    /// The document's `proxy`: the URL without credentials, always with its port. Made once: every
    /// document entry of a proxied target shares it.
    public let shown: String

    public var description: String { shown }

    /// What libcurl is given: the proxy at the address reachd resolved and routed, so curl connects
    /// exactly there (an HTTP proxy's name is used for nothing else).
    func curlURL(at address: IPAddress) -> String { "http://\(address.urlHost):\(port)" }

    public static func == (lhs: ProxyURL, rhs: ProxyURL) -> Bool {
        lhs.host == rhs.host && lhs.port == rhs.port && lhs.username == rhs.username && lhs.password == rhs.password
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(host)
        hasher.combine(port)
    }

    /// Why a proxy URL was refused. Never quotes the URL: it may hold a password.
    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        /// `socks5://`, `https://`, …: reachd speaks to HTTP proxies only.
        case unsupportedScheme
        case missingHost
        case invalidHost
        case invalidPort
        /// Anything after the authority but `/`.
        case unexpectedPath
        /// A `%` not followed by two hex digits in the credentials.
        case invalidCredentials

        public var description: String {
            switch self {
            case .unsupportedScheme: "the proxy URL must be http://HOST[:PORT] (reachd takes HTTP proxies only)"
            case .missingHost: "the proxy URL has no host"
            case .invalidHost:
                "the proxy's host is neither a name nor an IP address (IPv6 goes in brackets: [2001:db8::1])"
            case .invalidPort: "the proxy's port must be a number from 1 to 65535"
            case .unexpectedPath: "the proxy URL takes no path"
            case .invalidCredentials: "the proxy's credentials are not validly percent-encoded"
            }
        }
    }

    /// Parses `http://[USER[:PASSWORD]@]HOST[:PORT][/]`.
    ///
    /// - Parameter schemeRequired: `false` takes the same without `http://`, as curl reads
    ///   `http_proxy=proxy:3128`; `--proxy` asks for it, so a stray word is no proxy.
    public static func parse(_ text: String, schemeRequired: Bool = false) -> Result<ProxyURL, Problem> {
        var rest = Substring(text.trimmed)
        if let range = rest.firstRange(of: "://") {
            guard rest[..<range.lowerBound].lowercased() == "http" else { return .failure(.unsupportedScheme) }
            rest = rest[range.upperBound...]
        } else if schemeRequired {
            return .failure(.unsupportedScheme)
        }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains("/"), !rest.contains("?"), !rest.contains("#") else { return .failure(.unexpectedPath) }
        var username: String?
        var password: String?
        // The last `@`: a password may hold one unencoded, as curl takes it.
        if let at = rest.lastIndex(of: "@") {
            let userinfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let colon = userinfo.firstIndex(of: ":")
            guard let user = PercentDecoding.decoded(userinfo[..<(colon ?? userinfo.endIndex)]) else {
                return .failure(.invalidCredentials)
            }
            username = user
            if let colon {
                guard let secret = PercentDecoding.decoded(userinfo[userinfo.index(after: colon)...]) else {
                    return .failure(.invalidCredentials)
                }
                password = secret
            }
        }
        let host: Substring
        let portText: Substring?
        switch HostSyntax.split(rest) {
        case .failure: return .failure(.invalidHost)
        case .success(let split): (host, portText) = split
        }
        if host.isEmpty { return .failure(.missingHost) }
        guard case .success(let literal) = HostSyntax.validate(host, bracketed: rest.hasPrefix("[")) else {
            return .failure(.invalidHost)
        }
        var port = defaultPort
        if let portText {
            guard let number = HostSyntax.port(portText) else { return .failure(.invalidPort) }
            port = number
        }
        return .success(
            ProxyURL(host: String(host), literal: literal, port: port, username: username, password: password))
    }

    /// `text` with whatever precedes its last `@` after the scheme written `***`: a proxy URL as a
    /// message may quote it (`http://***@proxy:3128`), the credentials left out.
    public static func redacted(_ text: String) -> String {
        guard let at = text.lastIndex(of: "@") else { return text }
        let start = text.firstRange(of: "://")?.upperBound ?? text.startIndex
        guard start <= at else { return "***" + text[text.index(after: at)...] }
        return text[..<start] + "***" + text[at...]
    }
}
