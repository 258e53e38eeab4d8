import ArgumentParser

/// `reachd`: serve the network's reachability over HTTP, or ask a running instance about it.
/// Plain `reachd [options]` serves, so `reachd --help` lists every serving option. Started by
/// `main.swift`, which blocks the signals first.
struct Reachd: AsyncParsableCommand {
    static let version = "0.1.0"
    /// What the client commands send as `User-Agent`.
    static let userAgent = "reachd/\(version)"

    static let configuration = CommandConfiguration(
        commandName: "reachd",
        abstract: "Watches this host's (or container's) network and serves its reachability over HTTP.",
        // Serving needs no subcommand: say so, rather than ArgumentParser's `<subcommand>`.
        usage: """
            reachd [<options>]
              reachd <subcommand> [<options>]
            """,
        discussion: """
            Plain `reachd` serves. Endpoints: GET /status (JSON), GET /events (Server-Sent Events), \
            GET /changes (the last --history changes), GET /healthz, /livez, /readyz (health), \
            GET /metrics (Prometheus), GET / (the page).
            Every option can also be set with its environment variable; a flag wins over it.
            SIGTERM or SIGINT shuts down gracefully within --shutdown-timeout. Exit status: 0 after \
            a graceful shutdown, 1 when serving fails, 64 for a usage error (a malformed option).
            """,
        version: version,
        subcommands: [
            Serve.self, StatusCommand.self, WatchCommand.self, CheckCommand.self, WaitCommand.self,
            HashPasswordCommand.self,
        ]
    )

    @OptionGroup var options: ServeOptions

    func run() async throws {
        try await options.serve()
    }
}
