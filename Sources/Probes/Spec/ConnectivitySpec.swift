/// `--connectivity-url` and `--connectivity-response`: the NetworkManager-style internet check.
public struct ConnectivitySpec: Sendable, Hashable {
    /// An `http://` or `https://` URL.
    public let url: TargetURL
    /// The body prefix that makes a 2xx answer `full`; `nil` when not set (then only `204` is `full`).
    public let expectedResponse: [UInt8]?

    /// Validates both options together.
    ///
    /// - Parameters:
    ///   - url: `--connectivity-url`.
    ///   - response: `--connectivity-response`; empty counts as not set, as in NetworkManager.
    public static func parse(url: String, response: String? = nil) throws(SpecError) -> ConnectivitySpec {
        let parsed: TargetURL
        switch TargetURL.parse(url, allowed: [.http, .https]) {
        case .success(let value): parsed = value
        case .failure(let problem): throw SpecError(.connectivityURL, spec: url, problem: problem)
        }
        var expected: [UInt8]?
        if let response, !response.isEmpty {
            guard response.utf8.count <= ProbeLimits.maximumExpectedBody else {
                throw SpecError(.connectivityResponse, spec: response, problem: .responseTooLong)
            }
            expected = Array(response.utf8)
        }
        return ConnectivitySpec(url: parsed, expectedResponse: expected)
    }
}
