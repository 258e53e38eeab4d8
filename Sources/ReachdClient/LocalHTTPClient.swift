import Glibc
import Reachable

/// A minimal HTTP/1.1 client for the client commands: one GET to a local reachd over a plain
/// socket, with a timeout. No libcurl, so images without curl can still run `reachd check`.
package struct LocalHTTPClient {
    package let host: String
    package let port: Int
    /// Sent as `User-Agent`: `reachd/VERSION`.
    package let userAgent: String
    /// Seconds for connecting and for each read.
    package var timeout: Double = 3

    package init(host: String, port: Int, userAgent: String) {
        self.host = host
        self.port = port
        self.userAgent = userAgent
    }

    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    package struct Head {
        package var status: Int
        /// By lowercased name; the last of a name wins.
        package var headers: [String: String]
    }

    /// Opens a connection and sends `GET path`; the caller reads the answer.
    package func open(_ path: String) throws -> Connection {
        let connection = try Connection(host: host, port: port, timeout: timeout)
        // An IPv6 literal in brackets: reachd answers `421` to a `Host` it cannot read as one.
        let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        let request =
            "GET \(path) HTTP/1.1\r\nHost: \(authority)\r\nUser-Agent: \(userAgent)\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        try connection.write(Array(request.utf8))
        return connection
    }

    /// The whole answer of a short request (`/status`, `/readyz`).
    package func get(_ path: String) throws -> (head: Head, body: [UInt8]) {
        let connection = try open(path)
        let head = try connection.reader.readHead()
        return (head, try connection.reader.readBody(after: head))
    }

    /// One TCP connection; its answer is read through `reader`.
    package final class Connection {
        private let descriptor: Int32
        /// Reads the answer from this connection's socket (while the connection lives).
        package let reader: ResponseReader

        init(host: String, port: Int, timeout: Double) throws {
            var hints = addrinfo()
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            hints.ai_flags = AI_NUMERICHOST
            var result: UnsafeMutablePointer<addrinfo>?
            guard getaddrinfo(host, String(port), &hints, &result) == 0, let info = result else {
                throw Failure(description: "\(host) is not an IP address")
            }
            defer { freeaddrinfo(result) }
            let descriptor = socket(info.pointee.ai_family, info.pointee.ai_socktype, 0)
            guard descriptor >= 0 else { throw Failure(description: "socket failed") }
            var time = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1_000_000))
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
            guard connect(descriptor, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
                let reason = String(cString: strerror(errno))
                close(descriptor)
                throw Failure(description: "cannot connect to \(host):\(port): \(reason)")
            }
            self.descriptor = descriptor
            reader = ResponseReader { try Self.receive(from: descriptor) }
        }

        deinit {
            close(descriptor)
        }

        /// Reads without a deadline (for `watch`): heartbeats arrive well within any sane timeout.
        package func disableReadTimeout() {
            var none = timeval()
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &none, socklen_t(MemoryLayout<timeval>.size))
        }

        func write(_ bytes: [UInt8]) throws {
            var offset = 0
            while offset < bytes.count {
                let sent = bytes[offset...].withUnsafeBytes {
                    send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                guard sent > 0 else { throw Failure(description: "write failed: \(String(cString: strerror(errno)))") }
                offset += sent
            }
        }

        /// The next bytes from the socket; empty at end of stream.
        private static func receive(from descriptor: Int32) throws -> [UInt8] {
            var chunk = [UInt8](repeating: 0, count: 16 * 1024)
            do {
                let count = try systemCall("recv") { recv(descriptor, &chunk, chunk.count, 0) }
                return Array(chunk[0..<count])
            } catch {
                throw Failure(description: error.code == EAGAIN ? "timed out" : "read failed: \(error)")
            }
        }
    }
}
