import CProbeLibraries
import Reachable

/// libcurl's result codes in the contract's reasons.
enum CurlFailure {
    /// The reason for a transfer that did not end with `CURLE_OK`.
    ///
    /// `CURLE_COULDNT_CONNECT` covers a reset SYN (a closed port) and also an unreachable host or
    /// network reported by the kernel at connect time: "nobody took the connection" either way.
    static func reason(for code: CURLcode) -> ProbeFailureReason {
        switch code {
        case CURLE_COULDNT_CONNECT: .refused
        case CURLE_OPERATION_TIMEDOUT: .timeout
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR,
            CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CLIENTCERT:
            .tls
        default: .error
        }
    }
}
