import ArgumentParser
import FoundationEssentials
import ReachdClient

/// How the client commands (`status`, `check`, `watch`) reach a reachd with a web config:
/// HTTPS and its verification, and basic auth.
struct ClientSecurity: ParsableArguments {
    @Flag(help: "Ask over HTTPS (a reachd whose --web-config-file has tls_server_config).")
    var tls = false

    @Option(
        help: ArgumentHelp(
            "PEM file of the CAs that verify reachd's certificate, instead of the system's; implies --tls.",
            valueName: "path"))
    var cacert: String?

    @Flag(help: "Do not verify reachd's certificate (said on stderr); implies --tls.")
    var insecure = false

    @Option(help: ArgumentHelp("Basic auth credentials (env: REACHD_USER).", valueName: "name:password"))
    var user: String?

    /// The environment variable `--user` falls back to (a password kept out of `ps`).
    static let userEnvironment = "REACHD_USER"

    func validate() throws {
        guard !(insecure && cacert != nil) else { throw ValidationError("--insecure and --cacert exclude each other") }
        if let credentials = try resolvedUser(), !credentials.contains(":") {
            throw ValidationError("\(user != nil ? "--user" : Self.userEnvironment) must be NAME:PASSWORD")
        }
    }

    /// `--user`, else `REACHD_USER`; `nil` when neither is set.
    func resolvedUser() throws -> String? {
        if let user { return user }
        guard let value = ProcessInfo.processInfo.environment[Self.userEnvironment], !value.isEmpty else { return nil }
        return value
    }

    /// Sets the client's TLS and credentials; says on stderr when nothing is verified.
    func configure(_ client: inout LocalHTTPClient) throws {
        if tls || cacert != nil || insecure {
            client.tls = ClientTLS(caFile: cacert, insecure: insecure)
            if insecure { Output.write("reachd: --insecure: reachd's certificate is not verified\n", to: 2) }
        }
        client.user = try resolvedUser()
    }
}
