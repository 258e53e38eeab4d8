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
    /// What the certificate must name, as GnuTLS reads it during the handshake: it keeps the
    /// pointer, not a copy, so it lives as long as the session.
    private let expectedName: UnsafeMutablePointer<gnutls_typed_vdata_st>

    /// Shakes hands on `socket` (blocking, its timeouts already set to `timeout`).
    ///
    /// - Parameters:
    ///   - serverName: what the certificate must name: a DNS name (matched against its DNS
    ///     names), or an IP literal (matched against its IP addresses only).
    ///   - address: `host:port`, for the words of a failure.
    init(
        socket: Int32, serverName: String, address: String, timeout: Double, settings: ClientTLS
    ) throws(LocalHTTPClient.Failure) {
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
        expectedName = Self.expectedName(serverName)
        gnutls_set_default_priority(session)
        if !settings.insecure {
            let trusted =
                settings.caFile.map { gnutls_certificate_set_x509_trust_file(credentials, $0, GNUTLS_X509_FMT_PEM) }
                ?? gnutls_certificate_set_x509_system_trust(credentials)
            guard trusted > 0 else {
                throw LocalHTTPClient.Failure(
                    description: "TLS: no CA certificate read from \(settings.caFile ?? "the system's trust store")")
            }
            gnutls_session_set_verify_cert2(session, expectedName, 1, 0)
        }
        gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, UnsafeMutableRawPointer(credentials))
        // SNI only for a name: RFC 6066 forbids an address there.
        if IPAddress(serverName) == nil {
            gnutls_server_name_set(session, GNUTLS_NAME_DNS, serverName, serverName.utf8.count)
        }
        gnutls_transport_set_int2(session, socket, socket)
        var result: Int32
        repeat { result = gnutls_handshake(session) } while result == GNUTLS_E_INTERRUPTED
        guard result == 0 else {
            throw trouble(result, serverName: serverName, timeout: timeout).failure(at: address)
        }
    }

    /// A name as GnuTLS matches it against DNS names; an address as the raw bytes it matches
    /// against IP addresses. (The name GnuTLS was once given was Swift's temporary C string,
    /// gone before the handshake read it: any certificate then named "another host".)
    private static func expectedName(_ serverName: String) -> UnsafeMutablePointer<gnutls_typed_vdata_st> {
        let bytes = IPAddress(serverName)?.bytes ?? Array(serverName.utf8) + [0]
        let data = UnsafeMutablePointer<UInt8>.allocate(capacity: bytes.count)
        data.initialize(from: bytes, count: bytes.count)
        let expected = UnsafeMutablePointer<gnutls_typed_vdata_st>.allocate(capacity: 1)
        expected.initialize(
            to: IPAddress(serverName) == nil
                ? gnutls_typed_vdata_st(type: GNUTLS_DT_DNS_HOSTNAME, data: data, size: 0)
                : gnutls_typed_vdata_st(type: GNUTLS_DT_IP_ADDRESS, data: data, size: UInt32(bytes.count)))
        return expected
    }

    /// A failed handshake in the client commands' terms.
    private func trouble(_ result: Int32, serverName: String, timeout: Double) -> HandshakeTrouble {
        switch result {
        case GNUTLS_E_AGAIN:
            return .noHandshake(seconds: timeout)
        case GNUTLS_E_UNSUPPORTED_VERSION_PACKET, GNUTLS_E_UNEXPECTED_PACKET_LENGTH, GNUTLS_E_UNEXPECTED_PACKET,
            GNUTLS_E_RECORD_OVERFLOW:
            return .notTLS
        case GNUTLS_E_PREMATURE_TERMINATION, GNUTLS_E_PULL_ERROR:
            return .closed
        case GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR:
            return .untrusted(Self.doubts(gnutls_session_get_verify_cert_status(session)), serverName: serverName)
        default:
            return .other(String(cString: gnutls_strerror(result)))
        }
    }

    /// GnuTLS's status bits as the doubts they stand for.
    private static func doubts(_ status: UInt32) -> Set<HandshakeTrouble.CertificateDoubt> {
        let named: [(gnutls_certificate_status_t, HandshakeTrouble.CertificateDoubt)] = [
            (GNUTLS_CERT_SIGNER_NOT_FOUND, .unknownIssuer), (GNUTLS_CERT_SIGNER_NOT_CA, .issuerNotCA),
            (GNUTLS_CERT_SIGNATURE_FAILURE, .badSignature), (GNUTLS_CERT_EXPIRED, .expired),
            (GNUTLS_CERT_NOT_ACTIVATED, .notYetValid), (GNUTLS_CERT_REVOKED, .revoked),
            (GNUTLS_CERT_INSECURE_ALGORITHM, .insecureAlgorithm), (GNUTLS_CERT_UNEXPECTED_OWNER, .wrongName),
        ]
        var doubts = Set(named.filter { status & $0.0.rawValue != 0 }.map(\.1))
        // INVALID accompanies every reason; alone, or with one unnamed here, it says no more.
        let known = named.reduce(GNUTLS_CERT_INVALID.rawValue) { $0 | $1.0.rawValue }
        if doubts.isEmpty || status & ~known != 0 { doubts.insert(.other) }
        return doubts
    }

    deinit {
        gnutls_deinit(session)
        gnutls_certificate_free_credentials(credentials)
        expectedName.pointee.data.deallocate()
        expectedName.deallocate()
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
