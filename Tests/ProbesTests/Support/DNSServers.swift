import Foundation
import Reachable
import TestSupport

/// A real DNS server for the resolver tests: Debian's dnsmasq on one loopback address, answering
/// only what the test configures (`--no-resolv --no-hosts`: nothing is forwarded anywhere).
final class Dnsmasq: @unchecked Sendable {
    static let executable = "/usr/sbin/dnsmasq"
    let address: String
    let port: UInt16
    private let process: ChildProcess

    /// Starts dnsmasq and waits until it answers.
    ///
    /// - Parameters:
    ///   - records: `--address=/NAME/ADDRESS` pairs (an empty address means NXDOMAIN for the name).
    ///   - extraArguments: more dnsmasq options (`--local=/test/`, `--txt-record=…`).
    init(
        address: String, port: UInt16, records: [(name: String, address: String)], extraArguments: [String] = [],
        directory: TemporaryDirectory
    ) throws {
        self.address = address
        self.port = port
        var arguments = [
            "--no-resolv", "--no-hosts", "--keep-in-foreground", "--bind-interfaces",
            "--listen-address=\(address)", "--port=\(port)", "--pid-file=", "--user=root", "--log-facility=-",
            "--log-queries",
        ]
        arguments += records.map { "--address=/\($0.name)/\($0.address)" } + extraArguments
        process = try ChildProcess(Self.executable, arguments, logPath: directory.file("dnsmasq-\(address).log"))
        let deadline = ContinuousClock.now + .seconds(30)
        while !DNSQuery.answers(address: address, port: port) {
            if process.hasExited || ContinuousClock.now > deadline {
                process.terminate()
                throw ChildProcess.SpawnError(description: "dnsmasq did not start: \(process.log)")
            }
            usleep(20_000)
        }
    }

    deinit {
        process.terminate()
    }

    func stop() { process.terminate() }

    var log: String { process.log }
}

/// A "DNS server" that receives queries and never answers: the resolver's `timeout`.
final class SilentDNSServer: @unchecked Sendable {
    let descriptor: Int32

    init(address: String, port: UInt16) throws {
        descriptor = try LoopbackSocket.bound(LoopbackSocket.datagram, address: address, port: port)
    }

    deinit { close(descriptor) }
}

/// One hand-built query, only to know when dnsmasq is up.
enum DNSQuery {
    static func answers(address: String, port: UInt16) -> Bool {
        guard let descriptor = try? LoopbackSocket.bound(LoopbackSocket.datagram, address: "127.0.0.1") else {
            return false
        }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // ID 0x5eed, recursion desired, one question: "ready.test" A IN.
        var query: [UInt8] = [0x5e, 0xed, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]
        for label in ["ready", "test"] { query += [UInt8(label.utf8.count)] + Array(label.utf8) }
        query += [0, 0, 1, 0, 1]
        guard let server = IPAddress(address) else { return false }
        let sent = server.withSocketAddress(port: port) { sendto(descriptor, query, query.count, 0, $0, $1) }
        guard sent == query.count else { return false }
        var reply = [UInt8](repeating: 0, count: 512)
        let received = recv(descriptor, &reply, reply.count, 0)
        return received >= 12 && reply[0] == 0x5e && reply[1] == 0xed
    }
}
