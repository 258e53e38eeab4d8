import ArgumentParser

/// `reachd`: serve the network's reachability over HTTP, or ask a running instance about it.
/// Plain `reachd [options]` serves, so `reachd --help` lists every serving option.
@main
struct Reachd: AsyncParsableCommand {
    static let version = "0.1.0"
    /// What the client commands send as `User-Agent`.
    static let userAgent = "reachd/\(version)"

    static let configuration = CommandConfiguration(
        commandName: "reachd",
        abstract: "Watches this host's (or container's) network and serves its reachability over HTTP.",
        discussion: """
            Endpoints: GET /status (JSON), GET /events (Server-Sent Events), GET /healthz, /livez, /readyz.
            Every option can also be set with its environment variable; a flag wins over it.
            SIGTERM or SIGINT shuts down gracefully within --shutdown-timeout.
            """,
        version: version,
        subcommands: [Serve.self, StatusCommand.self, WatchCommand.self, CheckCommand.self]
    )

    @OptionGroup var options: ServeOptions

    func run() async throws {
        try await options.serve()
    }
}
