/// `--web-config-file`: the Prometheus exporter-toolkit's web configuration, the keys reachd
/// supports and nothing else (DESIGN.md, "TLS and authentication"). A plain value: what the
/// file says, before any file it names is read (`WebSecurity.load` reads those).
public struct WebConfig: Sendable, Equatable {
    /// `tls_server_config`: with it, reachd serves HTTPS only.
    public struct TLS: Sendable, Equatable {
        /// PEM: the leaf, then its chain if any. Relative paths are the config file's directory's.
        public var certFile: String
        public var keyFile: String
        public var clientAuth: ClientAuth = .none
        /// PEM bundle the client certificates are verified against.
        public var clientCAFile: String?
        public var minVersion: TLSVersion = .tls12

        public init(certFile: String, keyFile: String) {
            self.certFile = certFile
            self.keyFile = keyFile
        }

        /// Every file this configuration names, as read.
        public var files: [String] { [certFile, keyFile] + (clientCAFile.map { [$0] } ?? []) }
    }

    /// `client_auth_type`: the two of the toolkit's five that reachd supports.
    public enum ClientAuth: String, Sendable, CaseIterable {
        case none = "NoClientCert"
        case requireAndVerify = "RequireAndVerifyClientCert"
    }

    /// `min_version`.
    public enum TLSVersion: String, Sendable, CaseIterable {
        case tls12 = "TLS12"
        case tls13 = "TLS13"
    }

    public var tls: TLS?
    /// `basic_auth_users`: user name → bcrypt hash (validated when read). Empty: no basic auth.
    public var users: [String: String] = [:]

    public init(tls: TLS? = nil, users: [String: String] = [:]) {
        self.tls = tls
        self.users = users
    }
}

/// Why a web config was refused: the key or file it is about and, for the YAML, the line.
public struct WebConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    /// 1-based, when the problem is at a place in the file.
    public var line: Int?
    /// The web config file, when the problem is in its text.
    public var file: String?

    public init(_ message: String, line: Int? = nil, file: String? = nil) {
        self.message = message
        self.line = line
        self.file = file
    }

    /// `FILE: line N: message`, each part when known.
    public var description: String {
        ([file, line.map { "line \($0)" }].compactMap { $0 } + [message]).joined(separator: ": ")
    }
}
