import Foundation
import Glibc
import Logging
import Reachable
import ServiceLifecycleTestKit
import Testing

@testable import ReachableServer

/// The shutdown path of the server itself, driven by ServiceLifecycle's test trigger: the server
/// alone with its monitor, on port 0, with a real client over a real socket. The whole graph
/// `reachd` runs (monitor, probes, server from `buildApplication`) is shut down in
/// `ReachdAppTests/ApplicationTests`.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct GracefulShutdownTests {
    @Test func shutdownEndsStreamsCleanlyAndRefusesNewConnections() async throws {
        let monitor = try NetworkMonitor()
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.shutdownTimeout = 5
        let server = try ReachabilityServer(
            monitor: monitor, configuration: configuration, logger: Logger(label: "test"))

        try await testGracefulShutdown { trigger in
            let running = Task { try await server.run() }
            let client = try RawClient(port: server.port)
            try client.send("GET /events HTTP/1.1\r\nHost: test\r\n\r\n")
            let opening = try await client.read(until: "\n\n")
            #expect(opening.contains("HTTP/1.1 200"))
            #expect(opening.contains("retry: 2000\nid: \(monitor.current.sequence)\nevent: status\ndata: {"))

            trigger.triggerGracefulShutdown()
            let rest = try await client.readToEnd()
            #expect(rest.contains("retry: "))
            #expect(
                rest.hasSuffix("0\r\n\r\n"), "the stream ends with the final chunk: \(rest.suffix(40).debugDescription)"
            )
            try await running.value
            #expect(monitor.isClosed)
            #expect(throws: (any Error).self) { try RawClient(port: server.port) }
        }
    }

    /// Cancelling the serving task (what a ServiceGroup does when another service fails) drains
    /// the same way: streams end with their final chunk, and `run()` returns well within the
    /// shutdown timeout rather than spinning until it.
    @Test func cancellingTheServingTaskEndsStreamsAndReturnsPromptly() async throws {
        let monitor = try NetworkMonitor()
        defer { monitor.close() }
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        // Far above the generous bound below (a ThreadSanitizer run took 2.08 s): a run() that
        // spun until the timeout would take all of it.
        configuration.shutdownTimeout = 30
        let server = try ReachabilityServer(
            monitor: monitor, configuration: configuration, logger: Logger(label: "test"))

        let running = Task { try await server.run() }
        let client = try RawClient(port: server.port)
        try client.send("GET /events HTTP/1.1\r\nHost: test\r\n\r\n")
        _ = try await client.read(until: "\n\n")

        let cancelled = ContinuousClock.now
        running.cancel()
        let rest = try await client.readToEnd()
        try await running.value
        #expect(ContinuousClock.now - cancelled < .seconds(25), "well before the 30 s shutdown timeout")
        #expect(rest.contains("retry: "))
        #expect(
            rest.hasSuffix("0\r\n\r\n"), "the stream ends with the final chunk: \(rest.suffix(40).debugDescription)")
        #expect(throws: (any Error).self) { try RawClient(port: server.port) }
    }

    @Test func heartbeatsReachAnIdleStreamWhileServing() async throws {
        let monitor = try NetworkMonitor()
        defer { monitor.close() }
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.heartbeat = 0.1
        let server = try ReachabilityServer(
            monitor: monitor, configuration: configuration, logger: Logger(label: "test"))

        let running = Task { try await server.run() }
        let client = try RawClient(port: server.port)
        try client.send("GET /events HTTP/1.1\r\nHost: test\r\n\r\n")
        _ = try await client.read(until: "data: ")
        #expect(try await client.read(until: ": keep-alive\n\n").contains(": keep-alive"))
        running.cancel()
        try await running.value
    }
}

/// A blocking TCP client on loopback with a receive timeout, so a hang fails instead of waiting.
///
/// Each read blocks a thread of its own, never one of Swift's cooperative pool: that pool has
/// one thread per core (two in CI), and the server whose answer the read waits for needs them
/// (its shutdown runs in tasks). With the pool's other thread busy too — Swift Testing reads an
/// exit test's output with blocking reads — the server could not answer until the read timed
/// out. One read at a time: a test awaits each before the next.
final class RawClient: @unchecked Sendable {
    private let descriptor: Int32
    private var buffer = ""

    struct Failure: Error {}

    init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            throw Failure()
        }
    }

    deinit {
        close(descriptor)
    }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        guard Glibc.send(descriptor, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else { throw Failure() }
    }

    /// Everything received until `marker` has arrived (and whatever came with it).
    func read(until marker: String) async throws -> String {
        try await onAThreadOfItsOwn { [self] in
            while !buffer.contains(marker) {
                guard try receive() else { throw Failure() }
            }
            defer { buffer = "" }
            return buffer
        }
    }

    func readToEnd() async throws -> String {
        try await onAThreadOfItsOwn { [self] in
            while try receive() {}
            defer { buffer = "" }
            return buffer
        }
    }

    private func onAThreadOfItsOwn(_ read: @escaping @Sendable () throws -> String) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try read() }) }
        }
    }

    private func receive() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = recv(descriptor, &chunk, chunk.count, 0)
        if count < 0 { throw Failure() }
        buffer += String(decoding: chunk[0..<count], as: UTF8.self)
        return count > 0
    }
}
