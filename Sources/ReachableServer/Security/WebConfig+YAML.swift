extension WebConfig {
    /// Reads the YAML text of a web config. Every key not listed in DESIGN.md is refused by name
    /// (the toolkit's others — `http_server_config`, `cipher_suites`, … — would otherwise be
    /// silently ignored, and an operator would believe them in force), as is every duplicate, and
    /// each refusal names its line.
    ///
    /// - Parameter directory: what relative paths are resolved against (the file's directory, as
    ///   the exporter-toolkit does).
    public static func parse(yaml text: String, directory: String = ".") throws(WebConfigError) -> WebConfig {
        let root: YAMLNode?
        do {
            root = try YAMLNode.parse(text)
        } catch {
            throw WebConfigError("not valid YAML: \(error.problem)", line: error.line)
        }
        // An empty file configures nothing, as for the toolkit.
        guard let root, !root.isNull else { return WebConfig() }
        var config = WebConfig()
        for (key, value) in try mapping(root, "the web config") {
            switch key {
            case "tls_server_config":
                config.tls = try tls(value.node, directory: directory)
            case "basic_auth_users":
                config.users = try users(value.node)
            case "http_server_config":
                throw WebConfigError("http_server_config is not supported by reachd", line: value.line)
            default:
                throw WebConfigError("unknown key \(key)", line: value.keyLine)
            }
        }
        return config
    }

    private static func tls(_ node: YAMLNode, directory: String) throws(WebConfigError) -> TLS {
        var certFile: String?
        var keyFile: String?
        var clientAuth = ClientAuth.none
        var clientCAFile: String?
        var minVersion = TLSVersion.tls12
        for (key, value) in try mapping(node, "tls_server_config") {
            let name = "tls_server_config.\(key)"
            switch key {
            case "cert_file": certFile = try path(value, name, directory: directory)
            case "key_file": keyFile = try path(value, name, directory: directory)
            case "client_ca_file": clientCAFile = try path(value, name, directory: directory)
            case "client_auth_type":
                let text = try string(value, name)
                guard let auth = ClientAuth(rawValue: text) else {
                    throw WebConfigError(
                        "\(name): \(text) is not supported (NoClientCert or RequireAndVerifyClientCert)",
                        line: value.line)
                }
                clientAuth = auth
            case "min_version":
                let text = try string(value, name)
                guard let version = TLSVersion(rawValue: text) else {
                    throw WebConfigError("\(name): \(text) is not supported (TLS12 or TLS13)", line: value.line)
                }
                minVersion = version
            default:
                throw WebConfigError("unknown key \(name)", line: value.keyLine)
            }
        }
        guard let certFile else { throw WebConfigError("tls_server_config.cert_file is missing", line: node.line) }
        guard let keyFile else { throw WebConfigError("tls_server_config.key_file is missing", line: node.line) }
        if clientAuth == .requireAndVerify, clientCAFile == nil {
            throw WebConfigError(
                "tls_server_config.client_ca_file is needed by client_auth_type RequireAndVerifyClientCert",
                line: node.line)
        }
        var tls = TLS(certFile: certFile, keyFile: keyFile)
        tls.clientAuth = clientAuth
        tls.clientCAFile = clientCAFile
        tls.minVersion = minVersion
        return tls
    }

    private static func users(_ node: YAMLNode) throws(WebConfigError) -> [String: String] {
        var users: [String: String] = [:]
        for (name, value) in try mapping(node, "basic_auth_users") {
            guard !name.isEmpty, !name.contains(":") else {
                throw WebConfigError("basic_auth_users: a user name must be non-empty, without ':'", line: value.line)
            }
            let hash = try string(value, "basic_auth_users.\(name)")
            guard BcryptHash.isWellFormed(hash) else {
                throw WebConfigError(
                    "basic_auth_users.\(name): not a bcrypt hash ($2a$, $2b$ or $2y$, cost 04-31, 60 characters)",
                    line: value.line)
            }
            users[name] = hash
        }
        return users
    }

    // MARK: Nodes

    /// A mapping's entries with string keys, each key once; a null node is an empty mapping.
    private static func mapping(_ node: YAMLNode, _ name: String) throws(WebConfigError) -> [(String, EntryNode)] {
        if node.isNull { return [] }
        guard case .mapping(let mapping, _) = node else {
            throw WebConfigError("\(name) must be a mapping", line: node.line)
        }
        var seen: Set<String> = []
        var entries: [(String, EntryNode)] = []
        for (key, value) in mapping {
            guard case .scalar(let text, _, _) = key else {
                throw WebConfigError("\(name): a key must be a string", line: key.line)
            }
            guard seen.insert(text).inserted else {
                throw WebConfigError("\(name): \(text) is given twice", line: key.line)
            }
            entries.append((text, EntryNode(node: value, keyLine: key.line)))
        }
        return entries
    }

    private static func string(_ entry: EntryNode, _ name: String) throws(WebConfigError) -> String {
        guard case .scalar(let text, _, _) = entry.node, !entry.node.isNull else {
            throw WebConfigError("\(name) must be a string", line: entry.line)
        }
        return text
    }

    private static func path(_ entry: EntryNode, _ name: String, directory: String) throws(WebConfigError) -> String {
        let text = try string(entry, name)
        guard !text.isEmpty else { throw WebConfigError("\(name) is empty", line: entry.line) }
        return text.hasPrefix("/") ? text : "\(directory)/\(text)"
    }
}

/// A mapping's value with the line of its key (where an unknown key is reported).
private struct EntryNode {
    var node: YAMLNode
    var keyLine: Int?
    var line: Int? { node.line }
}
