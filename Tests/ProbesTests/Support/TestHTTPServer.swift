import Foundation

/// A small HTTP server on loopback that answers however a test wants: canned responses, silence,
/// a 10 MB body, one byte at a time. One thread accepts; one thread per connection answers.
final class TestHTTPServer: @unchecked Sendable {
    enum Behaviour: Sendable {
        /// Writes these bytes (a whole response) and closes.
        case respond(String)
        /// Reads the request and never answers (until the client or the test closes).
        case hang
        /// Answers 200 with a body of this many bytes, written as fast as the client reads.
        case hugeBody(Int)
        /// Writes a response one byte every 100 ms.
        case trickle(String)
    }

    let address: String
    let port: UInt16
    private let listener: Int32
    private let wake: (read: Int32, write: Int32)
    private let behaviour: @Sendable (String) -> Behaviour
    private let lock = NSLock()
    private var connections: Set<Int32> = []
    private var requestHeads: [String] = []
    private var bodyBytesSent = 0
    private var connectionsEnded = 0
    private var stopped = false
    private let threads = DispatchGroup()

    /// Starts listening.
    ///
    /// - Parameters:
    ///   - behaviour: what to do, given the request head (request line and headers).
    init(address: String = "127.0.0.1", behaviour: @escaping @Sendable (String) -> Behaviour) throws {
        self.address = address
        self.behaviour = behaviour
        listener = try LoopbackSocket.bound(LoopbackSocket.stream, address: address)
        guard listen(listener, 512) == 0 else { throw LoopbackSocket.Failure("listen") }
        port = LoopbackSocket.port(of: listener)
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw LoopbackSocket.Failure("pipe") }
        wake = (pipeEnds[0], pipeEnds[1])
        threads.enter()
        Thread.detachNewThread { [self] in
            acceptLoop()
            threads.leave()
        }
    }

    /// A server that answers every request with the same behaviour.
    convenience init(address: String = "127.0.0.1", _ behaviour: Behaviour) throws {
        try self.init(address: address) { _ in behaviour }
    }

    deinit {
        stop()
        close(listener)
        close(wake.read)
        close(wake.write)
    }

    /// Every request head received so far.
    var requests: [String] { lock.withLock { requestHeads } }

    /// Body bytes the `hugeBody` connections managed to write.
    var bodyBytesWritten: Int { lock.withLock { bodyBytesSent } }

    /// Connections this server has finished with: answered, or closed by the client (or by `stop()`).
    /// Whatever a client sent before it closed has been read by then.
    var endedConnections: Int { lock.withLock { connectionsEnded } }

    /// Closes every connection and waits for every thread. Idempotent.
    func stop() {
        let connectionsToClose: Set<Int32>? = lock.withLock {
            if stopped { return nil }
            stopped = true
            return connections
        }
        guard let connectionsToClose else { return }
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
        for connection in connectionsToClose { shutdown(connection, Int32(SHUT_RDWR)) }
        threads.wait()
    }

    private func acceptLoop() {
        var descriptors = [
            pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            guard poll(&descriptors, 2, -1) >= 0 || errno == EINTR else { return }
            if descriptors[1].revents != 0 { return }
            guard descriptors[0].revents != 0 else { continue }
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { continue }
            let accepted: Bool = lock.withLock {
                guard !stopped else { return false }
                connections.insert(connection)
                return true
            }
            guard accepted else {
                close(connection)
                return
            }
            threads.enter()
            Thread.detachNewThread { [self] in
                serve(connection)
                lock.withLock {
                    _ = connections.remove(connection)
                    connectionsEnded += 1
                }
                close(connection)
                threads.leave()
            }
        }
    }

    private func serve(_ connection: Int32) {
        guard let head = readHead(connection) else { return }
        lock.withLock { requestHeads.append(head) }
        switch behaviour(head) {
        case .respond(let response):
            writeAll(connection, Array(response.utf8))
        case .hang:
            var buffer = [UInt8](repeating: 0, count: 1024)
            while recv(connection, &buffer, buffer.count, 0) > 0 {}
        case .hugeBody(let size):
            guard writeAll(connection, Array("HTTP/1.1 200 OK\r\nContent-Length: \(size)\r\n\r\n".utf8)) else { return }
            let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 64 * 1024)
            var left = size
            while left > 0 {
                let count = min(left, chunk.count)
                let written = chunk.withUnsafeBytes { send(connection, $0.baseAddress, count, Int32(MSG_NOSIGNAL)) }
                if written <= 0 { return }
                left -= written
                lock.withLock { bodyBytesSent += written }
            }
        case .trickle(let response):
            for byte in Array(response.utf8) {
                if lock.withLock({ stopped }) { return }
                guard writeAll(connection, [byte]) else { return }
                usleep(100_000)
            }
        }
    }

    /// Reads until the blank line that ends a request head (or the client closes).
    private func readHead(_ connection: Int32) -> String? {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while received.count < 65536 {
            let count = recv(connection, &buffer, buffer.count, 0)
            if count <= 0 { return nil }
            received += buffer[..<count]
            if let text = String(bytes: received, encoding: .utf8), text.contains("\r\n\r\n") { return text }
        }
        return nil
    }

    @discardableResult
    private func writeAll(_ connection: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }
}

/// A port nothing listens on (a bound socket without `listen`, held so nobody else takes it): a
/// connection attempt is refused at once.
final class ClosedPort: @unchecked Sendable {
    let port: UInt16
    private let descriptor: Int32

    init(address: String = "127.0.0.1") throws {
        descriptor = try LoopbackSocket.bound(LoopbackSocket.stream, address: address)
        port = LoopbackSocket.port(of: descriptor)
    }

    deinit { close(descriptor) }
}
