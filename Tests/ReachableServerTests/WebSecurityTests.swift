import Testing

@testable import ReachableServer

/// The web config with the files it names: read and checked at start, read again on reload, and
/// a bad reading never applied.
@Suite(.serialized)
struct WebSecurityTests {
    static let hash = "$2b$04$wV4dIIBB7LbVUOBGXIIunehcyeGJFOJ/47E84NAoNl9iNqnmZY6kq"

    func config(
        _ certificates: TestCertificates, key: String = "server.key", extra: String = "", users: Bool = true
    ) throws -> String {
        try certificates.write(
            "web.yml",
            """
            tls_server_config:
              cert_file: server.crt
              key_file: \(key)
            \(extra)
            """ + (users ? "basic_auth_users:\n  prometheus: \(Self.hash)\n" : ""))
    }

    @Test func aGoodFileIsReadWithItsFiles() throws {
        let certificates = try TestCertificates()
        let path = try config(
            certificates, extra: "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n")
        let security = try WebSecurity(path: path)
        #expect(security.servesTLS)
        #expect(security.tls?.requiresClientCertificate == true)
        #expect(security.auth != nil)
        #expect(
            security.watchedFiles == [
                path, certificates.file("server.crt"), certificates.file("server.key"), certificates.file("ca.crt"),
            ])
    }

    @Test func aKeyOfAnotherCertificateIsRefused() throws {
        let certificates = try TestCertificates()
        let path = try config(certificates, key: "other.key")
        #expect {
            try WebSecurity(path: path)
        } throws: { error in
            "\(error)".contains("key_file \(certificates.file("other.key")) is not the key of cert_file")
        }
    }

    @Test func aMissingFileIsNamed() throws {
        let certificates = try TestCertificates()
        let path = try config(certificates, key: "absent.key")
        #expect {
            try WebSecurity(path: path)
        } throws: { error in
            "\(error)"
                == "tls_server_config.key_file \(certificates.file("absent.key")): cannot read it: No such file or directory"
        }
        #expect {
            try WebSecurity(path: certificates.file("absent.yml"))
        } throws: { error in
            "\(error)".contains("web config file \(certificates.file("absent.yml")): cannot read it")
        }
    }

    @Test func aFileThatIsNotPEMIsNamed() throws {
        let certificates = try TestCertificates()
        try certificates.write("junk.key", "not a key\n")
        try certificates.write("junk.crt", "not a certificate\n")
        #expect {
            try WebSecurity(path: try config(certificates, key: "junk.key"))
        } throws: { error in
            "\(error)".contains(
                "tls_server_config.key_file \(certificates.file("junk.key")): not an unencrypted PEM key")
        }
        let path = try certificates.write(
            "web2.yml", "tls_server_config:\n  cert_file: junk.crt\n  key_file: server.key\n")
        #expect {
            try WebSecurity(path: path)
        } throws: { error in
            "\(error)".contains("tls_server_config.cert_file \(certificates.file("junk.crt")): no PEM certificate")
        }
        let ca = try certificates.write(
            "web3.yml",
            "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_ca_file: junk.crt\n")
        #expect {
            try WebSecurity(path: ca)
        } throws: { error in
            "\(error)".contains("tls_server_config.client_ca_file \(certificates.file("junk.crt")): no PEM certificate")
        }
    }

    @Test func aYAMLErrorNamesTheFileAndTheLine() throws {
        let certificates = try TestCertificates()
        let path = try certificates.write("web.yml", "basic_auth_users:\n  alice: plain\n")
        #expect {
            try WebSecurity(path: path)
        } throws: { error in
            "\(error)"
                == "\(path): line 2: basic_auth_users.alice: not a bcrypt hash ($2a$, $2b$ or $2y$, cost 04-31, 60 characters)"
        }
    }

    @Test func aBadReloadKeepsWhatIsInForce() throws {
        let certificates = try TestCertificates()
        let path = try config(certificates)
        let security = try WebSecurity(path: path)
        let before = security.tls
        try certificates.write("web.yml", "tls_server_config:\n  cert_file: server.crt\n  key_file: other.key\n")
        guard case .failure(let error) = security.reload() else {
            Issue.record("a mismatched key was applied")
            return
        }
        #expect(error.message.contains("is not the key of"))
        #expect(security.tls === before)
        #expect(security.auth != nil)
        // Turning TLS off needs a restart: refused too.
        try certificates.write("web.yml", "basic_auth_users:\n  prometheus: \(Self.hash)\n")
        guard case .failure(let off) = security.reload() else {
            Issue.record("TLS was turned off by a reload")
            return
        }
        #expect(off.message.contains("needs a restart"))
        // A good file is applied: new credentials, no users.
        _ = try config(certificates, users: false)
        guard case .success = security.reload() else {
            Issue.record("a good file was refused")
            return
        }
        #expect(security.tls !== before)
        #expect(security.auth == nil)
    }

    @Test func minVersionSetsThePriorities() {
        #expect(TLSCredentials.priorities(.tls12).contains("+VERS-TLS1.2"))
        #expect(!TLSCredentials.priorities(.tls13).contains("+VERS-TLS1.2"))
    }
}
