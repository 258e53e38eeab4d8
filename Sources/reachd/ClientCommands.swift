import ArgumentParser
import FoundationEssentials
import Reachable

/// `reachd status`: the current status of a running instance, readable or as JSON.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Print the status of a running reachd."
    )

    @OptionGroup var address: ServerAddress

    @Flag(help: "Print the JSON document as served.")
    var json = false

    func run() throws {
        let client = LocalHTTPClient(host: try address.clientHost(), port: try address.resolvedPort())
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
        let client = LocalHTTPClient(host: try address.clientHost(), port: try address.resolvedPort())
        let connection = try client.open("/events")
        let head = try connection.readHead()
        guard head.status == 200 else { throw ValidationError("reachd answered \(head.status)") }
        connection.disableReadTimeout()
        var reader = EventStreamReader()
        while let chunk = try connection.readChunk() {
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
            var client = LocalHTTPClient(host: try address.clientHost(), port: try address.resolvedPort())
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

/// Human-readable status lines.
enum StatusText {
    static func summary(_ status: ReachabilityStatus) -> String {
        let path = status.path
        let transports = Transport.allCases.filter { path.transport.contains($0) }.map(\.rawValue)
        var parts = [
            ReachabilityStatus.timestampStyle.format(status.changedAt), "#\(status.sequence)", path.state.rawValue,
        ]
        if path.isReachable {
            parts.append([path.ipv4 ? "ipv4" : nil, path.ipv6 ? "ipv6" : nil].compactMap { $0 }.joined(separator: "+"))
            parts.append("via " + (transports.isEmpty ? "-" : transports.joined(separator: ",")))
            if path.isDataMetered { parts.append("metered") }
        }
        var probes: [String] = []
        if !status.targets.isEmpty { probes.append(targetsSummary(status.targets)) }
        if status.connectivity.state != .disabled {
            probes.append("connectivity " + stateText(status.connectivity.state.rawValue, status.connectivity.reason))
        }
        return ([parts.joined(separator: " ")] + probes).joined(separator: ", ")
    }

    /// `targets 2/3 reachable (db no-route)`: the count, and which are not reachable (the first
    /// few), so that a change of one target's reason still reads as a different line.
    static func targetsSummary(_ targets: [TargetStatus]) -> String {
        let reachable = targets.count { $0.state == .reachable }
        let others = targets.filter { $0.state != .reachable }
        var text = "targets \(reachable)/\(targets.count) reachable"
        if !others.isEmpty {
            let shown = others.prefix(3).map { "\($0.name) \($0.reason?.rawValue ?? $0.state.rawValue)" }
            let more = others.count > shown.count ? ["+\(others.count - shown.count) more"] : []
            text += " (" + (shown + more).joined(separator: ", ") + ")"
        }
        return text
    }

    /// `  target db tcp://db.internal:5432 reachable via eth0 [198.18.1.10]`, or
    /// `… unreachable (no-route) [198.18.1.10]`.
    static func line(_ target: TargetStatus) -> String {
        var parts = ["  target", target.name, target.url, stateText(target.state.rawValue, target.reason)]
        if let interface = target.interface { parts.append("via \(interface)") }
        if !target.addresses.isEmpty { parts.append(addressList(target.addresses)) }
        return parts.joined(separator: " ")
    }

    /// `  connectivity full http://check.example/generate_204`, or `… limited (timeout) …`.
    static func line(_ connectivity: ConnectivityStatus) -> String {
        let state = stateText(connectivity.state.rawValue, connectivity.reason)
        return (["  connectivity", state] + (connectivity.url.map { [$0] } ?? [])).joined(separator: " ")
    }

    /// `unreachable (no-route)`, or just the state when there is no reason.
    private static func stateText(_ state: String, _ reason: ProbeFailureReason?) -> String {
        reason.map { "\(state) (\($0.rawValue))" } ?? state
    }

    /// `[198.18.1.10, 2001:db8::10]`; a name with dozens of addresses shows the first four.
    private static func addressList(_ addresses: [String]) -> String {
        let shown = addresses.prefix(4)
        let more = addresses.count > shown.count ? ["+\(addresses.count - shown.count) more"] : []
        return "[" + (Array(shown) + more).joined(separator: ", ") + "]"
    }

    static func line(_ interface: InterfaceStatus) -> String {
        let route = interface.isDefaultRoute ? " default-route" : ""
        let addresses = interface.addresses.isEmpty ? "" : " " + interface.addresses.joined(separator: " ")
        return
            "  \(interface.name) (\(interface.kind ?? interface.transport.rawValue)) \(interface.operState)\(route)\(addresses)"
    }
}

/// Collects SSE `data:` lines into events (one status JSON per event).
struct EventStreamReader {
    private var pending = ""
    private var data: [String] = []

    mutating func feed(_ bytes: [UInt8]) -> [String] {
        pending += String(decoding: bytes, as: UTF8.self)
        var events: [String] = []
        while let newline = pending.firstIndex(of: "\n") {
            let line = String(pending[..<newline])
            pending.removeSubrange(...newline)
            if line.isEmpty {
                if !data.isEmpty { events.append(data.joined(separator: "\n")) }
                data = []
            } else if line.hasPrefix("data:") {
                data.append(String(line.dropFirst(5).drop { $0 == " " }))
            }
        }
        return events
    }
}
