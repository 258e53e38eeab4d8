import Glibc
import Reachable
import Synchronization
import Testing

@testable import ReachableServer

/// libmicrohttpd serves a shared response's bytes where they lie (no copy of its own): a client
/// still reading a large `/status` after the document changed, and every reference reachd held
/// is gone, must still get every byte it asked for — the bytes live until libmicrohttpd's last
/// connection is done with them.
@Suite(.serialized)
struct SharedResponseLifetimeTests {
    /// Serves whichever shared response is current.
    final class Current: HTTPHandler, Sendable {
        let shared: Mutex<SharedResponse?>
        init(_ shared: SharedResponse) { self.shared = Mutex(shared) }
        func respond(to request: HTTPRequest, on connection: any StreamConnection) -> HTTPResponse {
            guard let current = shared.withLock({ $0 }) else { return Problem.notFound.response }
            return HTTPResponse(status: 200, shared: current)
        }
        func streamEnded(_ stream: any BodyStream) {}
    }

    static let size = 8 << 20

    static func body(seed: UInt8) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: $0 % 251) &+ seed }
    }

    @Test func aReaderThatOutlivesAChangeGetsEveryByteOfWhatItAskedFor() throws {
        let (daemon, port) = try HTTPDaemon.onLoopback()
        let handler = Current(
            SharedResponse(headers: [HTTPField("Content-Type", "application/octet-stream")], body: Self.body(seed: 0)))
        try daemon.start(handler: handler)
        defer { daemon.stop() }

        let client = try SlowClient(port: port)
        defer { close(client.descriptor) }
        try client.send("GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        var received = try client.receive(atLeast: 64 << 10)

        // The document changes: reachd lets go of the old response (the snapshot's reference
        // and its prepared form), and the freed memory is handed out again and overwritten.
        handler.shared.withLock { $0 = SharedResponse(headers: [], body: Self.body(seed: 7)) }
        let reused = (0..<8).map { _ in [UInt8](repeating: 0xEE, count: Self.size) }
        withExtendedLifetime(reused) {}

        received += try client.receive(atLeast: Int.max)
        let headerEnd = try #require(received.firstRange(of: Array("\r\n\r\n".utf8)))
        let answered = Array(received[headerEnd.upperBound...])
        // Compared as one Bool: a failed `==` of two 8 MiB arrays would be diffed element by element.
        let intact = answered == Self.body(seed: 0)
        #expect(answered.count == Self.size)
        #expect(intact)
    }
}

/// A client with a small receive buffer, so the server cannot hand it the whole body at once.
private struct SlowClient {
    let descriptor: Int32

    struct Failed: Error { let call: String, code: Int32 }

    init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var small: Int32 = 4096
        setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let result = IPAddress("127.0.0.1")!.withSocketAddress(port: UInt16(port)) { address, length in
            connect(descriptor, address, length)
        }
        guard result == 0 else { throw Failed(call: "connect", code: errno) }
    }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        guard Glibc.send(descriptor, bytes, bytes.count, 0) == bytes.count else {
            throw Failed(call: "send", code: errno)
        }
    }

    /// Reads until `atLeast` bytes arrived or the server closed the connection.
    func receive(atLeast wanted: Int) throws -> [UInt8] {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while received.count < wanted {
            let count = recv(descriptor, &chunk, chunk.count, 0)
            if count == 0 { break }
            guard count > 0 else { throw Failed(call: "recv", code: errno) }
            received += chunk[..<count]
        }
        return received
    }
}
