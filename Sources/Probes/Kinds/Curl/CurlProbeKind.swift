/// A kind that probes through libcurl (`CurlTransfers`): a TCP connect or an HTTP(S) request.
public protocol CurlProbeKind: ProbeKind {
    /// The URL libcurl is given for `url`; `nil` when it has no port (never, once parsed).
    static func requestURL(of url: TargetURL) -> String?
}
