import CGnuTLS

/// One reading of the TLS files as GnuTLS holds them: the certificate chain and key (checked to
/// match), the client CAs, and the protocol versions. Each new connection takes the credentials
/// current when it is accepted and keeps them (retained) until it closes, so a rotation changes
/// what new handshakes see while open connections go on with what they began with.
final class TLSCredentials: @unchecked Sendable {
    // Unchecked: GnuTLS credentials and priority caches are immutable once built and may be
    // shared by sessions on any thread; they are freed only in `deinit`.
    private let credentials: gnutls_certificate_credentials_t
    private let priorities: gnutls_priority_t
    let requiresClientCertificate: Bool
    /// The PEM text as read, for libmicrohttpd's own (unused but required) credentials at start.
    let certificatePEM: String
    let keyPEM: String
    let priorityText: String

    /// - Parameters: the files' bytes and names (the names only for what a refusal says).
    init(
        certificate: [UInt8], certificateFile: String, key: [UInt8], keyFile: String,
        clientCA: (bytes: [UInt8], file: String)?, clientAuth: WebConfig.ClientAuth,
        minVersion: WebConfig.TLSVersion
    ) throws(WebConfigError) {
        try Self.checkCertificate(certificate, file: certificateFile)
        try Self.checkKey(key, file: keyFile)
        var credentials: gnutls_certificate_credentials_t?
        guard gnutls_certificate_allocate_credentials(&credentials) == 0, let credentials else {
            throw WebConfigError("GnuTLS cannot allocate credentials")
        }
        var made = false
        defer { if !made { gnutls_certificate_free_credentials(credentials) } }
        let added = Self.withDatum(certificate) { certificateDatum in
            Self.withDatum(key) { keyDatum in
                gnutls_certificate_set_x509_key_mem(credentials, certificateDatum, keyDatum, GNUTLS_X509_FMT_PEM)
            }
        }
        if added == GNUTLS_E_CERTIFICATE_KEY_MISMATCH {
            throw WebConfigError(
                "tls_server_config: key_file \(keyFile) is not the key of cert_file \(certificateFile)")
        }
        guard added >= 0 else {
            throw WebConfigError(
                "tls_server_config: cert_file \(certificateFile) with key_file \(keyFile): \(Self.reason(added))")
        }
        if let clientCA {
            let trusted = Self.withDatum(clientCA.bytes) {
                gnutls_certificate_set_x509_trust_mem(credentials, $0, GNUTLS_X509_FMT_PEM)
            }
            guard trusted > 0 else {
                throw WebConfigError(
                    "tls_server_config.client_ca_file \(clientCA.file): no PEM certificate in it"
                        + (trusted < 0 ? " (\(Self.reason(trusted)))" : ""))
            }
        }
        priorityText = Self.priorities(minVersion)
        var priorities: gnutls_priority_t?
        guard gnutls_priority_init(&priorities, priorityText, nil) == 0, let priorities else {
            throw WebConfigError("GnuTLS refuses the priorities \(priorityText)")
        }
        made = true
        self.credentials = credentials
        self.priorities = priorities
        requiresClientCertificate = clientAuth == .requireAndVerify
        certificatePEM = String(decoding: certificate, as: UTF8.self)
        keyPEM = String(decoding: key, as: UTF8.self)
    }

    deinit {
        gnutls_priority_deinit(priorities)
        gnutls_certificate_free_credentials(credentials)
    }

    /// Readies a new connection's session before its handshake: these credentials and versions,
    /// and with `RequireAndVerifyClientCert` a client certificate that GnuTLS verifies against
    /// the client CAs during the handshake (no certificate, or one of another CA, fails it).
    func prepare(session: OpaquePointer) {
        gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, UnsafeMutableRawPointer(credentials))
        gnutls_priority_set(session, priorities)
        if requiresClientCertificate {
            gnutls_certificate_server_set_request(session, GNUTLS_CERT_REQUIRE)
            gnutls_session_set_verify_cert(session, nil, 0)
        }
    }

    /// GnuTLS' priority string for a minimum version: TLS 1.2 and 1.3, or 1.3 alone.
    static func priorities(_ minVersion: WebConfig.TLSVersion) -> String {
        switch minVersion {
        case .tls12: "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"
        case .tls13: "NORMAL:-VERS-ALL:+VERS-TLS1.3"
        }
    }

    private static func checkCertificate(_ bytes: [UInt8], file: String) throws(WebConfigError) {
        var list: UnsafeMutablePointer<gnutls_x509_crt_t?>?
        var count: UInt32 = 0
        let result = withDatum(bytes) { gnutls_x509_crt_list_import2(&list, &count, $0, GNUTLS_X509_FMT_PEM, 0) }
        guard result >= 0, count > 0 else {
            throw WebConfigError("tls_server_config.cert_file \(file): no PEM certificate (\(reason(result)))")
        }
        for index in 0..<Int(count) { gnutls_x509_crt_deinit(list?[index]) }
        reachd_gnutls_free(list)
    }

    private static func checkKey(_ bytes: [UInt8], file: String) throws(WebConfigError) {
        var key: gnutls_x509_privkey_t?
        guard gnutls_x509_privkey_init(&key) == 0 else { throw WebConfigError("GnuTLS cannot make a key") }
        defer { gnutls_x509_privkey_deinit(key) }
        let result = withDatum(bytes) { gnutls_x509_privkey_import2(key, $0, GNUTLS_X509_FMT_PEM, nil, 0) }
        guard result == 0 else {
            throw WebConfigError("tls_server_config.key_file \(file): not an unencrypted PEM key (\(reason(result)))")
        }
    }

    static func reason(_ code: Int32) -> String {
        String(cString: gnutls_strerror(code))
    }

    private static func withDatum<Result>(
        _ bytes: [UInt8], _ body: (UnsafePointer<gnutls_datum_t>) -> Result
    ) -> Result {
        var copy = bytes
        return copy.withUnsafeMutableBufferPointer { buffer in
            var datum = gnutls_datum_t(data: buffer.baseAddress, size: UInt32(buffer.count))
            return body(&datum)
        }
    }
}
