import ArgumentParser
import FoundationEssentials
import Reachable
import ReachdClient

/// `reachd watch`: follows `/events` and prints, per document, its summary line and the diff from
/// the one before in words (`WatchLines`), and a line when the stream reconnected or the server
/// restarted. When the stream ends or
/// the server cannot be reached, it says so on stderr and reconnects as a browser's
/// `EventSource` does — after the server's `retry:`, with `Last-Event-ID` — doubling the pause
/// while attempts fail; `--once` ends with the first stream instead. What no retry mends ends it
/// too: refused credentials (exit 77), and before any stream opened, the other protocol or a
/// certificate not trusted (exit 1).
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Follow a running reachd and print one line per status change, reconnecting when it goes away."
    )

    @OptionGroup var address: ServerAddress
    @OptionGroup var security: ClientSecurity

    @Flag(help: "End when the stream ends (exit 0) or cannot be opened (exit 1), instead of reconnecting.")
    var once = false

    /// The pause before the first reconnection when the server named none (its default `retry:`).
    static let defaultRetry: Duration = .seconds(2)
    /// The longest pause between attempts.
    static let longestPause: Duration = .seconds(30)

    func run() async throws {
        var client = LocalHTTPClient(
            host: try address.clientHost(), port: try address.resolvedPort(), userAgent: Reachd.userAgent)
        try security.configure(&client)
        var reader = EventStreamReader()
        var lines = WatchLines()
        var pause: Duration?
        // Once a stream opened, the options were right: a later mismatch is a restart with other
        // settings, or a connection limit that closed this one at once, and worth another try.
        var streamed = false
        while true {
            do {
                try follow(client, with: &reader, printing: &lines) {
                    pause = nil
                    streamed = true
                }
                if once { return }
                Self.say("the stream ended")
            } catch let failure as LocalHTTPClient.Failure {
                if once || failure.kind == .credentialsRefused || (failure.needsOtherOptions && !streamed) {
                    throw failure.reported()
                }
                Self.say("\(failure)")
            }
            let retry = reader.retry.map { Duration.milliseconds($0) } ?? Self.defaultRetry
            // After a stream that worked: the server's delay; after each failed attempt, twice the last.
            let next = pause.map { min($0 * 2, Self.longestPause) } ?? min(retry, Self.longestPause)
            pause = next
            Self.say(
                "reconnecting in \(next.secondsText) s" + (reader.lastEventID.map { " (Last-Event-ID: \($0))" } ?? "")
            )
            try await Task.sleep(for: next)
        }
    }

    /// One connection: prints the lines of each event until the stream ends. `connected` runs once
    /// the server has answered with a stream.
    private func follow(
        _ client: LocalHTTPClient, with reader: inout EventStreamReader, printing lines: inout WatchLines,
        connected: () -> Void
    ) throws {
        // The last id seen, so the server knows where this client left off (it answers with the
        // current document either way: status is state).
        let headers = reader.lastEventID.map { [(name: "Last-Event-ID", value: $0)] } ?? []
        let connection = try client.open("/events", headers: headers)
        let head = try connection.readHead()
        guard head.status == 200 else {
            throw LocalHTTPClient.Failure(description: "\(client.hostHeader) answered \(head.status)")
        }
        try connection.disableReadTimeout()
        connected()
        lines.streamOpened()
        while let chunk = try connection.reader.readChunk() {
            for data in reader.feed(chunk) {
                guard let status = try? ReachabilityStatus(jsonBytes: data.utf8),
                    let document = try? JSONValue(parsing: data)
                else {
                    continue
                }
                // The lines of a change, at once, even into a pipe.
                Output.write(lines.lines(for: status, document: document).map { $0 + "\n" }.joined())
            }
        }
    }

    /// A note on stderr, so stdout keeps one line per change.
    private static func say(_ text: String) {
        Output.write("reachd watch: \(text)\n", to: 2)
    }
}
