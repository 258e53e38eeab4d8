extension TargetURL.Scheme {
    /// A GET answers 200–399.
    public static let http: Self = "http"
    /// The same over TLS, the certificate verified.
    public static let https: Self = "https"
}

/// `http://` and `https://`: one GET through libcurl, answered 200–399 (the connectivity check
/// compares the body's beginning too), through the proxy the job names if any (`Transfer+Proxy`).
public enum WebProbe: CurlProbeKind {
    public static let schemes: [TargetURL.Scheme] = [.http, .https]

    public static func parts(
        _ scheme: TargetURL.Scheme, port: UInt16?, remainder: String
    ) -> Result<(port: UInt16?, path: String), SpecError.Problem> {
        let path = remainder.hasPrefix("/") ? remainder : "/" + remainder
        if !HostSyntax.isSafePath(path) { return .failure(.invalidPath) }
        return .success((port ?? (scheme == .http ? 80 : 443), path))
    }

    /// libcurl's own parser must take the URL, so a spec accepted at start is one the engine can set.
    public static func refusal(of url: TargetURL) -> SpecError.Problem? {
        guard let requestURL = requestURL(of: url), CurlURLCheck.accepts(requestURL) else { return .invalidPath }
        return nil
    }

    /// As written, normalised.
    public static func requestURL(of url: TargetURL) -> String? {
        url.authority.map { "\(url.scheme.rawValue)://\($0)\(url.path)" }
    }

    public static var connectsOnly: Bool { false }

    /// The application beside reachd reaches the web through its proxy: so does the check.
    public static var takesProxy: Bool { true }
}
