/// A kind that probes through libcurl (`CurlTransfers`): a TCP connect or an HTTP(S) request.
public protocol CurlProbeKind: ProbeKind {
    /// The URL libcurl is given for `url`; `nil` when it has no port (never, once parsed).
    static func requestURL(of url: TargetURL) -> String?
    /// Whether libcurl only connects (`CURLOPT_CONNECT_ONLY`) instead of sending a request.
    static var connectsOnly: Bool { get }
}

extension CurlProbeKind {
    public static func probe(
        _ job: ProbeJob, on engine: ProbeEngine, completion: @escaping @Sendable (ProbeOutcome) -> Void
    ) -> Bool {
        let url = requestURL(of: job.url)
        return engine.probe(with: CurlTransfers.self, completion: completion) {
            $0.start(job, url: url, connectOnly: connectsOnly, completion: completion)
        }
    }
}
