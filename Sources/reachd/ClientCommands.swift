import ArgumentParser
import FoundationEssentials
import Reachable
import ReachdClient

/// `reachd status`: the current status of a running instance, readable or as JSON.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Print the status of a running reachd."
    )

    @OptionGroup var address: ServerAddress
    @OptionGroup var security: ClientSecurity

    @Flag(help: "Print the JSON document as served.")
    var json = false

    func run() throws {
        var client = LocalHTTPClient(
            host: try address.clientHost(), port: try address.resolvedPort(), userAgent: Reachd.userAgent)
        try security.configure(&client)
        let body: [UInt8]
        do {
            let (head, answer) = try client.get("/status")
            guard head.status == 200 else {
                throw LocalHTTPClient.Failure(description: "\(client.hostHeader) answered \(head.status)")
            }
            body = answer
        } catch let failure as LocalHTTPClient.Failure {
            throw failure.reported()
        }
        if json {
            print(String(decoding: body, as: UTF8.self))
            return
        }
        let status = try ReachabilityStatus(jsonBytes: body)
        print(StatusText.summary(status))
        for interface in status.path.interfaces {
            print(StatusText.line(interface))
        }
        for target in status.targets {
            print(StatusText.line(target))
        }
        if let file = status.targetsFile { print(StatusText.line(file)) }
        if status.connectivity.state != .disabled {
            print(StatusText.line(status.connectivity))
        }
        if status.dns.state != .disabled {
            print(StatusText.line(status.dns))
            for server in status.dns.servers {
                print(StatusText.line(server))
            }
        }
    }
}

/// `reachd check`: exit 0 when the local instance answers ready (or live), 1 when it does not
/// or cannot be asked, 77 when it refuses the credentials, 64 for a usage mistake — so a typo
/// in a probe does not read as an outage. For a Docker HEALTHCHECK in an image without curl.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract:
            "Exit 0 if a running reachd is ready (or live with --live), 1 otherwise (77: credentials refused; 64: a usage error).",
        discussion: "When the check fails, each failing check is printed with the state it observed."
    )

    @OptionGroup var address: ServerAddress
    @OptionGroup var security: ClientSecurity

    @Flag(help: "Check /readyz (the default).")
    var ready = false

    @Flag(help: "Check /livez instead of /readyz.")
    var live = false

    @Option(help: "Seconds to wait for an answer (more than 0, at most 600).")
    var timeout: Double = 3

    func validate() throws {
        guard timeout > 0, timeout <= 600 else {
            throw ValidationError("--timeout must be more than 0 and at most 600")
        }
        guard !(ready && live) else { throw ValidationError("--ready and --live exclude each other") }
    }

    func run() throws {
        let path = live ? "/livez" : "/readyz"
        // Usage errors (a malformed REACHD_HOST or REACHD_PORT) throw here: exit 64.
        var client = LocalHTTPClient(
            host: try address.clientHost(), port: try address.resolvedPort(), userAgent: Reachd.userAgent)
        client.timeout = timeout
        try security.configure(&client)
        do {
            let (head, body) = try client.get(path)
            let verdict = HealthText.status(body).map { " \($0)" } ?? ""
            print("\(path): \(head.status)\(verdict)")
            guard head.status == 200 else {
                for line in HealthText.failingChecks(body) { print(line) }
                throw ExitCode(1)
            }
        } catch let failure as LocalHTTPClient.Failure {
            print("\(path): \(failure)")
            throw ExitCode(failure.exitStatus)
        }
    }
}
