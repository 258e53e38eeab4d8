import FoundationEssentials
import Glibc
import Reachable

/// A minimal HTTP/1.1 client for the client commands: one GET to a local reachd over a plain
/// socket, with a timeout. No libcurl, so images without curl can still run `reachd check`.
package struct LocalHTTPClient {
    /// An IP literal, or `localhost` (tried as 127.0.0.1, then ::1).
    package let host: String
    package let port: Int
    /// Sent as `User-Agent`: `reachd/VERSION`.
    package let userAgent: String
    /// Seconds for connecting and for each read.
    package var timeout: Double = 3
    /// HTTPS (`--tls`); `nil`: plain HTTP.
    package var tls: ClientTLS?
    /// `--user NAME:PASSWORD`, sent as basic auth with every request.
    package var user: String?

    package init(host: String, port: Int, userAgent: String) {
        self.host = host
        self.port = port
        self.userAgent = userAgent
    }

    package struct Head {
        package var status: Int
        /// By lowercased name; the last of a name wins.
        package var headers: [String: String]
    }

    /// The addresses `host` stands for, in the order they are tried: `localhost` is loopback
    /// of both families, as /etc/hosts has it, without asking a resolver.
    package var addresses: [String] {
        host.lowercased() == "localhost" ? ["127.0.0.1", "::1"] : [host]
    }

    /// `Host:` as RFC 9110 writes it: an IPv6 literal in brackets.
    package var hostHeader: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Opens a connection and sends `GET path` with `headers`; the caller reads the answer
    /// (`Connection.readHead`).
    package func open(_ path: String, headers: [(name: String, value: String)] = []) throws -> Connection {
        let connection = try connect()
        var request =
            "GET \(path) HTTP/1.1\r\nHost: \(hostHeader)\r\nUser-Agent: \(userAgent)\r\nAccept: */*\r\nConnection: close\r\n"
        if let user { request += "Authorization: Basic \(Data(user.utf8).base64EncodedString())\r\n" }
        for header in headers { request += "\(header.name): \(header.value)\r\n" }
        try connection.write(Array((request + "\r\n").utf8))
        return connection
    }

    /// The whole answer of a short request (`/status`, `/readyz`).
    package func get(_ path: String) throws -> (head: Head, body: [UInt8]) {
        let connection = try open(path)
        let head = try connection.readHead()
        return (head, try connection.reader.readBody(after: head))
    }

    /// A connection to the first of `addresses` that accepts one.
    private func connect() throws -> Connection {
        var reasons: [String] = []
        var refused = true
        for address in addresses {
            do {
                // The certificate names what was asked: `localhost`, or the address given.
                return try Connection(
                    address: address, port: port, timeout: timeout, hostHeader: hostHeader,
                    tls: tls.map { ($0, host.lowercased() == "localhost" ? "localhost" : host) })
            } catch {
                // What only other options mend (TLS against plain, say) is told as it is.
                if error.needsOtherOptions { throw error }
                reasons.append(error.description)
                refused = refused && error.refused
            }
        }
        // Refused everywhere: most often reachd serves elsewhere (or not at all), so say how to
        // name the other place; a timeout or an unreachable host is not that mistake.
        let hint =
            refused
            ? " (nothing listens there: start reachd, or name where it serves with --host and --port,"
                + " or REACHD_HOST and REACHD_PORT)" : ""
        throw Failure(
            description: "cannot connect to \(hostHeader): \(reasons.joined(separator: "; "))\(hint)", refused: refused)
    }

    /// One TCP connection; its answer is read through `reader`, its head through `readHead`.
    package final class Connection {
        private let socket: OwnedDescriptor
        /// With `--tls`: the session every byte goes through.
        private let session: TLSClientSession?
        /// Without: what the socket gave, for telling a TLS port's refusal of a plain request.
        private let plain: PlainReception?
        /// `host:port`, as the failures name it.
        private let address: String
        /// Reads the answer from this connection's socket (while the connection lives).
        package let reader: ResponseReader

        init(
            address: String, port: Int, timeout: Double, hostHeader: String,
            tls: (ClientTLS, serverName: String)? = nil
        ) throws(Failure) {
            guard let ip = IPAddress(address) else { throw Failure(description: "\(address) is not an IP address") }
            guard let port = UInt16(exactly: port) else {
                throw Failure(description: "port \(port) is not in 0...65535")
            }
            let socket = try Self.connectedSocket(ip, address: address, port: port, timeout: timeout)
            let descriptor = socket.rawValue
            let session = try tls.map { (settings, serverName) throws(Failure) in
                try TLSClientSession(
                    socket: descriptor, serverName: serverName, address: hostHeader, timeout: timeout,
                    settings: settings)
            }
            self.socket = socket
            self.session = session
            self.address = hostHeader
            if let session {
                plain = nil
                reader = ResponseReader { try session.receive() }
            } else {
                let plain = PlainReception(socket: descriptor)
                self.plain = plain
                reader = ResponseReader { try plain.receive() }
            }
        }

        /// The status line and headers. A plain request that met a TLS port, and a `401`, fail
        /// with what to do about them.
        package func readHead() throws -> Head {
            let head: Head
            do {
                head = try reader.readHead()
            } catch let failure as Failure {
                throw plain?.tlsRefusal(at: address) ?? failure
            }
            guard head.status != 401 else { throw Failure.credentialsRefused(by: address) }
            return head
        }

        /// A TCP socket connected to `ip`, with the timeouts set.
        private static func connectedSocket(
            _ ip: IPAddress, address: String, port: UInt16, timeout: Double
        ) throws(Failure) -> OwnedDescriptor {
            do throws(SystemError) {
                let socket = OwnedDescriptor(
                    taking: try systemCall("socket") {
                        Glibc.socket(ip.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
                    })
                try Self.setTimeout(SO_RCVTIMEO, seconds: timeout, on: socket.rawValue)
                try Self.setTimeout(SO_SNDTIMEO, seconds: timeout, on: socket.rawValue)
                try ip.withSocketAddress(port: port) { (socketAddress, length) throws(SystemError) in
                    try systemCall("connect \(address)") { Glibc.connect(socket.rawValue, socketAddress, length) }
                }
                return socket
            } catch {
                throw Failure(
                    description: error.code == EINPROGRESS ? "connect \(address): timed out" : "\(error)",
                    refused: error.code == ECONNREFUSED)
            }
        }

        /// Reads without a deadline (for `watch`): heartbeats arrive well within any sane timeout.
        package func disableReadTimeout() throws {
            do {
                try Self.setTimeout(SO_RCVTIMEO, seconds: 0, on: socket.rawValue)
            } catch {
                throw Failure(description: "\(error)")
            }
        }

        func write(_ bytes: [UInt8]) throws {
            var offset = 0
            while offset < bytes.count {
                if let session {
                    offset += try session.send(bytes[offset...])
                    continue
                }
                do {
                    offset += try bytes[offset...].withUnsafeBytes { chunk throws(SystemError) in
                        try systemCall("send") {
                            send(socket.rawValue, chunk.baseAddress, chunk.count, Int32(MSG_NOSIGNAL))
                        }
                    }
                } catch {
                    throw Failure(description: "write failed: \(error)")
                }
            }
        }

        /// `SO_RCVTIMEO` or `SO_SNDTIMEO`; 0 waits for ever.
        private static func setTimeout(_ option: Int32, seconds: Double, on descriptor: Int32) throws(SystemError) {
            let whole = Int(seconds)
            var time = timeval(tv_sec: whole, tv_usec: Int((seconds - Double(whole)) * 1_000_000))
            try systemCall("setsockopt") {
                setsockopt(descriptor, SOL_SOCKET, option, &time, socklen_t(MemoryLayout<timeval>.size))
            }
        }
    }
}
