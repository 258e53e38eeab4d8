/// Why a target is unreachable or the connectivity check is `limited`: the contract's `reason` values.
public enum ProbeReason: String, Sendable, Hashable, CaseIterable {
    /// The name did not resolve (NXDOMAIN, no A/AAAA data, a refusing or failing server).
    case dns
    /// The kernel has no usable route to any address.
    case noRoute = "no-route"
    /// No answer within the timeout (DNS, connect, TLS or HTTP).
    case timeout
    /// The connection was refused (`CURLE_COULDNT_CONNECT`).
    case refused
    /// An HTTP answer outside 200–399.
    case httpStatus = "http-status"
    /// The TLS handshake or the certificate check failed.
    case tls
    /// Anything else.
    case error
}
