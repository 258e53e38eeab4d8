import ArgumentParser

/// `--host` and `--port` of serving.
struct ServerAddress: ParsableArguments {
    @Option(Settings.host) var host: String?

    @Option(Settings.port) var port: Int?

    /// Where the client commands ask when no host is given.
    static let loopback = "127.0.0.1"

    /// Where the server listens: `localhost` is IPv4 loopback (one listening socket; `::1`
    /// serves IPv6 loopback).
    func serverHost() throws -> String {
        let host = try Settings.host.resolve(host)
        return host == "localhost" ? Self.loopback : host
    }

    func resolvedPort() throws -> Int {
        try Settings.port.resolve(port)
    }
}
