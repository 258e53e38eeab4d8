extension TargetURL.Scheme {
    /// A TCP handshake completes.
    public static let tcp: Self = "tcp"
}

/// `tcp://HOST:PORT`: a TCP handshake, through libcurl (`CURLOPT_CONNECT_ONLY`), so it shares
/// the engine's one event loop and its error mapping with the web probes.
public enum TCPProbe: CurlProbeKind {
    public static let schemes: [TargetURL.Scheme] = [.tcp]

    public static func parts(
        _ scheme: TargetURL.Scheme, port: UInt16?, remainder: String
    ) -> Result<(port: UInt16?, path: String), SpecError.Problem> {
        guard let port else { return .failure(.missingPort) }
        if !remainder.isEmpty, remainder != "/" { return .failure(.unexpectedPath) }
        return .success((port, ""))
    }

    /// An `http://` URL that the engine only connects to.
    public static func requestURL(of url: TargetURL) -> String? {
        url.authority.map { "http://\($0)/" }
    }

    /// The handshake is the probe: nothing is sent.
    public static var connectsOnly: Bool { true }
}
