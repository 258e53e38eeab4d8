import Testing

@testable import ReachableServer

/// The web config's YAML: the supported keys, and a refusal naming the key and the line for
/// everything else.
struct WebConfigTests {
    static let hash = "$2b$04$wV4dIIBB7LbVUOBGXIIunehcyeGJFOJ/47E84NAoNl9iNqnmZY6kq"

    @Test func everySupportedKeyIsRead() throws {
        let config = try WebConfig.parse(
            yaml: """
                tls_server_config:
                  cert_file: tls.crt
                  key_file: /etc/reachd/tls.key
                  client_auth_type: RequireAndVerifyClientCert
                  client_ca_file: ca.crt
                  min_version: TLS13
                basic_auth_users:
                  prometheus: \(Self.hash)
                """, directory: "/etc/reachd")
        let tls = try #require(config.tls)
        #expect(tls.certFile == "/etc/reachd/tls.crt")
        #expect(tls.keyFile == "/etc/reachd/tls.key")
        #expect(tls.clientAuth == .requireAndVerify)
        #expect(tls.clientCAFile == "/etc/reachd/ca.crt")
        #expect(tls.minVersion == .tls13)
        #expect(config.users == ["prometheus": Self.hash])
    }

    @Test func defaultsAreNoClientCertificateAndTLS12() throws {
        let config = try WebConfig.parse(yaml: "tls_server_config:\n  cert_file: a\n  key_file: b\n")
        #expect(config.tls?.clientAuth == WebConfig.ClientAuth.none)
        #expect(config.tls?.minVersion == .tls12)
        #expect(config.users.isEmpty)
    }

    @Test(arguments: ["", "\n", "# nothing\n", "~\n"])
    func anEmptyFileConfiguresNothing(text: String) throws {
        #expect(try WebConfig.parse(yaml: text) == WebConfig())
    }

    @Test(arguments: [
        (
            "tls_server_config:\n  cert_file: a\n  key_file: b\nhttp_server_config:\n  http2: false\n",
            "http_server_config", 5
        ),
        ("basic_auth_users: {}\nfoo: 1\n", "unknown key foo", 2),
        (
            "tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: []\n",
            "tls_server_config.cipher_suites", 4
        ),
        (
            "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: RequestClientCert\n",
            "RequestClientCert", 4
        ),
        ("tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS11\n", "TLS11", 4),
        ("tls_server_config:\n  key_file: b\n", "tls_server_config.cert_file is missing", 2),
        ("tls_server_config:\n  cert_file: a\n", "tls_server_config.key_file is missing", 2),
        (
            "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: RequireAndVerifyClientCert\n",
            "client_ca_file is needed", 2
        ),
        ("basic_auth_users:\n  alice: plain-text\n", "basic_auth_users.alice: not a bcrypt hash", 2),
        ("basic_auth_users:\n  alice: $1$abc$defghijklmnopqrstuv\n", "basic_auth_users.alice", 2),
        ("basic_auth_users:\n  alice: \(hash)\n  alice: \(hash)\n", "alice is given twice", 3),
        ("basic_auth_users:\n  - alice\n", "basic_auth_users must be a mapping", 2),
        ("tls_server_config:\n  cert_file: [a]\n  key_file: b\n", "tls_server_config.cert_file must be a string", 2),
        ("tls_server_config:\n  cert_file: \"\"\n  key_file: b\n", "tls_server_config.cert_file is empty", 2),
        ("tls_server_config: [\n", "not valid YAML", 2),
        ("a: b: c\n", "not valid YAML", 1),
        ("basic_auth_users: &users {}\n", "anchors and aliases are not supported", 1),
        ("tls_server_config:\n  cert_file: a\n  key_file: *k\n", "anchors and aliases are not supported", 3),
        ("basic_auth_users: {}\n---\nbasic_auth_users: {}\n", "only one YAML document", 2),
        // YAML's line breaks: CR LF is one, a lone CR is one too (as libyaml counts them).
        ("basic_auth_users: {}\r\nfoo: 1\r\n", "unknown key foo", 2),
        ("basic_auth_users: {}\r\rfoo: 1\r", "unknown key foo", 3),
    ])
    func aRefusalNamesTheKeyAndTheLine(text: String, named: String, line: Int) {
        #expect {
            try WebConfig.parse(yaml: text)
        } throws: { error in
            guard let error = error as? WebConfigError else { return false }
            return error.message.contains(named) && error.line == line
        }
    }

    @Test(arguments: [
        "$2a$10$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234",
        "$2y$31$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234", hash,
    ])
    func bcryptHashesAreWellFormed(hash: String) {
        #expect(BcryptHash.isWellFormed(hash))
    }

    @Test(arguments: [
        "", "$2x$10$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234",
        "$2b$03$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234",
        "$2b$32$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234",
        "$2b$10$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ0123",
        "$2b$10$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ0123!",
        "$6$salt$hash", "{SHA}abc=",
    ])
    func otherHashesAreRefused(hash: String) {
        #expect(!BcryptHash.isWellFormed(hash))
    }
}
