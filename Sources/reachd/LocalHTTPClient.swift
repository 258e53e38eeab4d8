import FoundationEssentials
import Glibc
import Reachable

/// A minimal HTTP/1.1 client for the client commands: one GET to a local reachd over a plain
/// socket, with a timeout. No libcurl, so images without curl can still run `reachd check`.
struct LocalHTTPClient {
    let host: String
    let port: Int
    /// Seconds for connecting and for each read.
    var timeout: Double = 3

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    struct Head {
        var status: Int
        var headers: [String: String]
    }

    /// Opens a connection and sends `GET path`; the caller reads the answer.
    func open(_ path: String) throws -> Connection {
        let connection = try Connection(host: host, port: port, timeout: timeout)
        let request =
            "GET \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nUser-Agent: reachd/\(Reachd.version)\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        try connection.write(Array(request.utf8))
        return connection
    }

    /// The whole answer of a short request (`/status`, `/readyz`).
    func get(_ path: String) throws -> (head: Head, body: [UInt8]) {
        let connection = try open(path)
        let head = try connection.readHead()
        var body: [UInt8] = []
        if head.headers["transfer-encoding"]?.lowercased() == "chunked" {
            while let chunk = try connection.readChunk() { body += chunk }
        } else if let length = head.headers["content-length"].flatMap(Int.init) {
            body = try connection.read(exactly: length)
        } else {
            body = try connection.readToEnd()
        }
        return (head, body)
    }

    /// One TCP connection with buffered reads.
    final class Connection {
        private let descriptor: Int32
        private var buffer: [UInt8] = []

        init(host: String, port: Int, timeout: Double) throws {
            var hints = addrinfo()
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            hints.ai_flags = AI_NUMERICHOST
            var result: UnsafeMutablePointer<addrinfo>?
            guard getaddrinfo(host, String(port), &hints, &result) == 0, let info = result else {
                throw Failure(description: "\(host) is not an IP address")
            }
            defer { freeaddrinfo(result) }
            descriptor = socket(info.pointee.ai_family, info.pointee.ai_socktype, 0)
            guard descriptor >= 0 else { throw Failure(description: "socket failed") }
            var time = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1_000_000))
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
            guard connect(descriptor, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
                let reason = String(cString: strerror(errno))
                close(descriptor)
                throw Failure(description: "cannot connect to \(host):\(port): \(reason)")
            }
        }

        deinit {
            close(descriptor)
        }

        /// Reads without a deadline (for `watch`): heartbeats arrive well within any sane timeout.
        func disableReadTimeout() {
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

        /// More bytes into the buffer; false at end of stream.
        private func fill() throws -> Bool {
            var chunk = [UInt8](repeating: 0, count: 16 * 1024)
            do {
                let count = try systemCall("recv") { recv(descriptor, &chunk, chunk.count, 0) }
                buffer += chunk[0..<count]
                return count > 0
            } catch {
                throw Failure(description: error.code == EAGAIN ? "timed out" : "read failed: \(error)")
            }
        }

        func readLine() throws -> String? {
            while true {
                if let end = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    var line = Array(buffer[..<end])
                    buffer.removeSubrange(...end)
                    if line.last == UInt8(ascii: "\r") { line.removeLast() }
                    return String(decoding: line, as: UTF8.self)
                }
                guard try fill() else { return nil }
            }
        }

        func read(exactly count: Int) throws -> [UInt8] {
            while buffer.count < count {
                guard try fill() else { throw Failure(description: "connection closed early") }
            }
            defer { buffer.removeFirst(count) }
            return Array(buffer.prefix(count))
        }

        func readToEnd() throws -> [UInt8] {
            while try fill() {}
            defer { buffer = [] }
            return buffer
        }

        func readHead() throws -> Head {
            guard let statusLine = try readLine() else { throw Failure(description: "no answer") }
            let parts = statusLine.split(separator: " ")
            guard parts.count >= 2, let status = Int(parts[1]) else {
                throw Failure(description: "not an HTTP answer: \(statusLine)")
            }
            var headers: [String: String] = [:]
            while let line = try readLine(), !line.isEmpty {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmed
            }
            return Head(status: status, headers: headers)
        }

        /// The next chunk of a chunked body; `nil` after the last one.
        func readChunk() throws -> [UInt8]? {
            guard let sizeLine = try readLine(),
                let size = Int(sizeLine.split(separator: ";").first ?? "", radix: 16)
            else { throw Failure(description: "bad chunk") }
            if size == 0 {
                _ = try readLine()
                return nil
            }
            let data = try read(exactly: size)
            _ = try readLine()
            return data
        }
    }
}
