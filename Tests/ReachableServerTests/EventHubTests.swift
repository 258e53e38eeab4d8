import Testing

@testable import ReachableServer

/// Fan-out of frames to every open stream, driven without libmicrohttpd: the hub's writer
/// threads run, and `flush()` waits until they have written what was handed over.
struct EventHubTests {
    private let hub = EventHub(initialFrame: Array("id: 0\n\n".utf8), retryMilliseconds: 2000, writers: 2)

    init() throws {
        try hub.startWriters()
    }

    private func frame(_ id: Int) -> [UInt8] { Array("id: \(id)\n\n".utf8) }

    @Test func aLateJoinerStartsWithTheLatestFrame() {
        hub.publish(frame(1))
        hub.publish(frame(2))
        let stream = hub.open(connection: RecordingConnection())
        #expect(stream.readAvailable().text == "retry: 2000\nid: 2\n\n")
    }

    @Test func aPublishReachesEveryStreamOnce() {
        let connections = (0..<3).map { _ in RecordingConnection() }
        let streams = connections.map { hub.open(connection: $0) }
        for stream in streams { #expect(stream.readAvailable().text == "retry: 2000\nid: 0\n\n") }

        hub.publish(frame(1))
        hub.flush()
        for (stream, connection) in zip(streams, connections) {
            #expect(connection.calls == [.suspend, .resume])
            let (text, stop) = stream.readAvailable()
            #expect(text == "id: 1\n\n")
            #expect(stop == .suspended)
        }
    }

    @Test func aHeartbeatReachesIdleStreams() {
        let stream = hub.open(connection: RecordingConnection())
        _ = stream.readAvailable()
        hub.heartbeat()
        hub.flush()
        #expect(stream.readAvailable().text == ": keep-alive\n\n")
    }

    @Test func closeAllEndsEveryStreamAndAnyOpenedAfterwards() throws {
        let before = hub.open(connection: RecordingConnection())
        _ = before.readAvailable()
        hub.closeAll()
        let after = hub.open(connection: RecordingConnection())
        hub.publish(frame(1))
        hub.flush()

        let (ending, stop) = before.readAvailable()
        #expect(stop == .ended)
        try expectFinalRetry(ending)

        let (whole, afterStop) = after.readAvailable()
        #expect(afterStop == .ended)
        #expect(whole.hasPrefix("retry: 2000\nid: 0\n\n"), "a stream opened while closing still gets the present")
        try expectFinalRetry(String(whole.dropFirst("retry: 2000\nid: 0\n\n".count)))
    }

    /// `retry: N\n\n` with the usual 2000 ms plus up to 3 s of jitter.
    private func expectFinalRetry(_ text: String) throws {
        #expect(text.hasPrefix("retry: ") && text.hasSuffix("\n\n"), "\(text.debugDescription)")
        let milliseconds = try #require(Int(text.dropFirst("retry: ".count).dropLast(2)))
        #expect((2000..<5000).contains(milliseconds))
    }

    @Test func removingAStreamForgetsIt() {
        let first = hub.open(connection: RecordingConnection())
        let second = hub.open(connection: RecordingConnection())
        #expect(hub.count == 2)
        hub.remove(first)
        #expect(hub.count == 1)
        hub.remove(second)
        #expect(hub.count == 0)
    }
}
