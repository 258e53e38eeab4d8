import CGnuTLS
import Glibc
import Reachable

/// The client commands' TLS (`--tls`): GnuTLS over the command's own connected socket, so
/// `reachd status` / `check` / `watch` reach a reachd that serves HTTPS without curl in the image.
/// The server's certificate is verified against `--cacert` (or the system's CAs) and the name or
/// address asked, unless `--insecure`.
package struct ClientTLS: Sendable {
    /// A PEM bundle to trust instead of the system's CAs.
    package var caFile: String?
    /// No verification at all (said on stderr by the command).
    package var insecure = false

    package init(caFile: String? = nil, insecure: Bool = false) {
        self.caFile = caFile
        self.insecure = insecure
    }
}

/// One TLS session on a connected socket; the socket stays its owner's.
final class TLSClientSession {
    private let session: gnutls_session_t
    private let credentials: gnutls_certificate_credentials_t

    /// Shakes hands on `socket` (blocking, its timeouts already set).
    ///
    /// - Parameter serverName: what the certificate must name (a DNS name or an IP literal).
    init(socket: Int32, serverName: String, settings: ClientTLS) throws(LocalHTTPClient.Failure) {
        var credentials: gnutls_certificate_credentials_t?
        guard gnutls_certificate_allocate_credentials(&credentials) == 0, let credentials else {
            throw LocalHTTPClient.Failure(description: "TLS: cannot allocate credentials")
        }
        var session: gnutls_session_t?
        guard gnutls_init(&session, UInt32(GNUTLS_CLIENT)) == 0, let session else {
            gnutls_certificate_free_credentials(credentials)
            throw LocalHTTPClient.Failure(description: "TLS: cannot make a session")
        }
        self.session = session
        self.credentials = credentials
        if !settings.insecure {
            let trusted =
                settings.caFile.map { gnutls_certificate_set_x509_trust_file(credentials, $0, GNUTLS_X509_FMT_PEM) }
                ?? gnutls_certificate_set_x509_system_trust(credentials)
            guard trusted > 0 else {
                throw LocalHTTPClient.Failure(
                    description: "TLS: no CA certificate read from \(settings.caFile ?? "the system's trust store")")
            }
            gnutls_session_set_verify_cert(session, serverName, 0)
        }
        gnutls_set_default_priority(session)
        gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, UnsafeMutableRawPointer(credentials))
        // SNI only for a name: RFC 6066 forbids an address there.
        if IPAddress(serverName) == nil {  // SNI takes names only
            gnutls_server_name_set(session, GNUTLS_NAME_DNS, serverName, serverName.utf8.count)
        }
        gnutls_transport_set_int2(session, socket, socket)
        var result: Int32
        repeat { result = gnutls_handshake(session) } while result < 0 && gnutls_error_is_fatal(result) == 0
        guard result == 0 else {
            let status = gnutls_session_get_verify_cert_status(session)
            var reason = String(cString: gnutls_strerror(result))
            if result == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR {
                var text = gnutls_datum_t()
                if gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &text, 0) == 0 {
                    reason = String(cString: text.data)
                    reachd_gnutls_free(text.data)
                }
            }
            throw LocalHTTPClient.Failure(description: "TLS handshake with \(serverName) failed: \(reason)")
        }
    }

    deinit {
        gnutls_deinit(session)
        gnutls_certificate_free_credentials(credentials)
    }

    func send(_ bytes: ArraySlice<UInt8>) throws(LocalHTTPClient.Failure) -> Int {
        let sent = bytes.withUnsafeBytes { gnutls_record_send(session, $0.baseAddress, $0.count) }
        guard sent >= 0 else {
            throw LocalHTTPClient.Failure(description: "write failed: \(String(cString: gnutls_strerror(Int32(sent))))")
        }
        return sent
    }

    /// The next bytes; empty at the end of the stream (a close_notify, or the peer's FIN).
    func receive() throws(LocalHTTPClient.Failure) -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = gnutls_record_recv(session, &chunk, chunk.count)
            if count >= 0 { return Array(chunk[0..<count]) }
            if Int32(count) == GNUTLS_E_INTERRUPTED { continue }
            if Int32(count) == GNUTLS_E_AGAIN { throw LocalHTTPClient.Failure(description: "timed out") }
            if Int32(count) == GNUTLS_E_PREMATURE_TERMINATION { return [] }
            throw LocalHTTPClient.Failure(description: "read failed: \(String(cString: gnutls_strerror(Int32(count))))")
        }
    }
}
