import CProbeLibraries
import Glibc
import Reachable

/// libcurl's result codes in the contract's reasons.
enum CurlFailure {
    /// The reason for a transfer that did not end with `CURLE_OK`.
    ///
    /// `CURLE_COULDNT_CONNECT` covers a reset SYN (a closed port) and also an ICMP destination
    /// unreachable from a router on the way: the socket's errno (`CURLINFO_OS_ERRNO`) tells them
    /// apart.
    ///
    /// - Parameter socketErrno: the errno of the failed connect, 0 when curl recorded none.
    static func reason(for code: CURLcode, socketErrno: Int32 = 0) -> ProbeFailureReason {
        switch code {
        case CURLE_COULDNT_CONNECT: reason(forConnectErrno: socketErrno)
        case CURLE_OPERATION_TIMEDOUT: .timeout
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR,
            CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CLIENTCERT:
            .tls
        default: .error
        }
    }

    /// A failed connect by its errno. The kernel turns an ICMP destination unreachable into
    /// `EHOSTUNREACH` / `ENETUNREACH` (host, network, administratively filtered — IPv4 and IPv6
    /// alike), `EHOSTDOWN` (host unknown), `ENONET` (host isolated) or `ENOPROTOOPT` (protocol
    /// unreachable); only "port unreachable" and a TCP reset are `ECONNREFUSED`. Anything else
    /// curl reports as a failed connect stays `refused`, as before.
    static func reason(forConnectErrno socketErrno: Int32) -> ProbeFailureReason {
        switch socketErrno {
        case EHOSTUNREACH, ENETUNREACH, EHOSTDOWN, ENONET, ENOPROTOOPT: .hostUnreachable
        default: .refused
        }
    }
}
