import ArgumentParser

/// `reachd`: serve the network's reachability over HTTP, or ask a running instance about it.
@main
struct Reachd: AsyncParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "reachd",
        abstract: "Watches this host's (or container's) network and serves its reachability over HTTP.",
        discussion: """
            Endpoints: GET /status (JSON), GET /events (Server-Sent Events), GET /healthz, /livez, /readyz.
            Every option of `serve` can also be set with its environment variable; a flag wins over it.
            """,
        version: version,
        subcommands: [Serve.self, StatusCommand.self, WatchCommand.self, CheckCommand.self],
        defaultSubcommand: Serve.self
    )
}
