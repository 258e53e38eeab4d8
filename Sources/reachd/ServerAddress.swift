import ArgumentParser

/// `--host` and `--port`, shared by `serve` and the client commands so they find each other.
struct ServerAddress: ParsableArguments {
    @Option(
        help:
            "Address to listen on / to ask: an IPv4 or IPv6 literal (env: REACHD_HOST, default: 0.0.0.0 to serve, 127.0.0.1 to ask)."
    )
    var host: String?

    @Option(help: "TCP port (env: REACHD_PORT, default: 9478).")
    var port: Int?

    static let defaultPort = 9478

    func resolvedPort() throws -> Int {
        let port = try Setting.resolve(port, env: "REACHD_PORT", default: Self.defaultPort)
        guard (0...65535).contains(port) else { throw ValidationError("port must be 0...65535, not \(port)") }
        return port
    }

    /// Where a client command connects: the serving address, or loopback when serving on all.
    func clientHost() throws -> String {
        let host = try Setting.resolve(host, env: "REACHD_HOST", default: "127.0.0.1")
        switch host {
        case "0.0.0.0": return "127.0.0.1"
        case "::": return "::1"
        default: return host
        }
    }
}
