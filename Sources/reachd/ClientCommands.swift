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

    @Flag(help: "Print the JSON document as served.")
    var json = false

    func run() throws {
        let client = LocalHTTPClient(
            host: try address.clientHost(), port: try address.resolvedPort(), userAgent: Reachd.userAgent)
        let (head, body) = try client.get("/status")
        guard head.status == 200 else { throw ValidationError("reachd answered \(head.status)") }
        if json {
            print(String(decoding: body, as: UTF8.self))
            return
        }
        let status = try JSONDecoder().decode(ReachabilityStatus.self, from: Data(body))
        print(StatusText.summary(status))
        for interface in status.path.interfaces {
            print(StatusText.line(interface))
        }
        for target in status.targets {
            print(StatusText.line(target))
        }
        if status.connectivity.state != .disabled {
            print(StatusText.line(status.connectivity))
        }
    }
}

/// `reachd watch`: follows `/events` and prints one line per change until the stream ends.
struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch", abstract: "Follow a running reachd and print one line per status change."
    )

    @OptionGroup var address: ServerAddress

    func run() throws {
        let client = LocalHTTPClient(
            host: try address.clientHost(), port: try address.resolvedPort(), userAgent: Reachd.userAgent)
        let connection = try client.open("/events")
        let head = try connection.reader.readHead()
        guard head.status == 200 else { throw ValidationError("reachd answered \(head.status)") }
        connection.disableReadTimeout()
        var reader = EventStreamReader()
        while let chunk = try connection.reader.readChunk() {
            for data in reader.feed(chunk) {
                guard let status = try? JSONDecoder().decode(ReachabilityStatus.self, from: Data(data.utf8)) else {
                    continue
                }
                // A line per change, at once, even into a pipe.
                Output.write(StatusText.summary(status) + "\n")
            }
        }
    }
}

/// `reachd check`: exit 0 when the local instance answers ready (or live), 1 otherwise. For a
/// Docker HEALTHCHECK in an image without curl.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check", abstract: "Exit 0 if a running reachd is ready (or live with --live), 1 otherwise."
    )

    @OptionGroup var address: ServerAddress

    @Flag(help: "Check /readyz (the default).")
    var ready = false

    @Flag(help: "Check /livez instead of /readyz.")
    var live = false

    @Option(help: "Seconds to wait for an answer.")
    var timeout: Double = 3

    func run() throws {
        let path = live ? "/livez" : "/readyz"
        do {
            var client = LocalHTTPClient(
                host: try address.clientHost(), port: try address.resolvedPort(), userAgent: Reachd.userAgent)
            client.timeout = timeout
            let (head, _) = try client.get(path)
            guard head.status == 200 else {
                print("\(path): \(head.status)")
                throw ExitCode(1)
            }
            print("\(path): \(head.status)")
        } catch let error as LocalHTTPClient.Failure {
            print("\(path): \(error)")
            throw ExitCode(1)
        }
    }
}
