import ArgumentParser

/// `--host` and `--port`, shared by `serve` and the client commands so they find each other.
struct ServerAddress: ParsableArguments {
    @Option(Settings.host) var host: String?

    @Option(Settings.port) var port: Int?

    /// Where the client commands ask when no host is given.
    static let loopback = "127.0.0.1"

    /// Where the server listens.
    func serverHost() throws -> String {
        try Settings.host.resolve(host)
    }

    func resolvedPort() throws -> Int {
        try Settings.port.resolve(port)
    }

    /// Where a client command connects: the serving address, or loopback when serving on all.
    func clientHost() throws -> String {
        switch try Settings.host.value(host) ?? Self.loopback {
        case "0.0.0.0": return Self.loopback
        case "::": return "::1"
        case let host: return host
        }
    }
}
