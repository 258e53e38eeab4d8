import Dispatch
import Glibc
import Synchronization
import Testing

@testable import ReachableServer

/// The fan-out runs on the hub's own writer threads: the publisher hands a change over and
/// returns, each stream gets its frames in order and never the one it started with twice, and
/// stopping writes what was handed over first.
@Suite(.timeLimit(.minutes(1)))
struct FanOutWriterTests {
    private func frame(_ id: Int) -> [UInt8] { Array("id: \(id)\n\n".utf8) }

    /// A parked stream whose direct writes succeed, and its connection.
    private func parkedStream(
        on hub: EventHub, _ connection: some StreamConnection = RecordingConnection(directWrites: .written)
    ) -> EventStream {
        let stream = hub.open(connection: connection)
        _ = stream.readAvailable()
        return stream
    }

    @Test func thePublisherReturnsWhileAWriterIsStillWriting() throws {
        let hub = EventHub(initialFrame: frame(0), retryMilliseconds: 2000)
        try hub.startWriters()
        let gate = GatedConnection()
        _ = parkedStream(on: hub, gate)
        hub.publish(frame(1))
        gate.waitUntilWriting()
        // The writer is held inside the write, yet the publisher is here and can publish again.
        hub.publish(frame(2))
        gate.open()
        hub.flush()
        #expect(gate.texts == ["id: 1\n\n", "id: 2\n\n"])
        #expect(gate.writingThreads.allSatisfy { pthread_equal($0, pthread_self()) == 0 })
    }

    @Test func aStreamGetsEveryStepInOrderAndEndsWithTheNewest() throws {
        let hub = EventHub(initialFrame: frame(0), retryMilliseconds: 2000, writers: 2)
        try hub.startWriters()
        let connections = (0..<8).map { _ in RecordingConnection(directWrites: .written) }
        for connection in connections { _ = parkedStream(on: hub, connection) }
        for id in 1...200 { hub.publish(frame(id)) }
        hub.flush()
        for connection in connections {
            let ids = connection.writes.map { Int($0.text.dropFirst(4).dropLast(2)) ?? -1 }
            #expect(ids == ids.sorted() && Set(ids).count == ids.count, "out of order: \(ids)")
            #expect(ids.last == 200)
        }
    }

    @Test func aStreamOpenedAfterAPublishDoesNotGetItsFirstFrameAgain() throws {
        let hub = EventHub(initialFrame: frame(0), retryMilliseconds: 2000)
        try hub.startWriters()
        let gate = GatedConnection()
        _ = parkedStream(on: hub, gate)
        hub.publish(frame(1))
        gate.waitUntilWriting()
        hub.publish(frame(2))  // waits with the writer, which is held in frame 1
        let late = RecordingConnection(directWrites: .written)
        let stream = parkedStream(on: hub, late)
        gate.open()
        hub.flush()
        #expect(late.writes.isEmpty, "it started with frame 2: \(late.writes.map(\.text))")
        #expect(stream.readAvailable().text == "")
        #expect(gate.texts == ["id: 1\n\n", "id: 2\n\n"])
    }

    @Test func stoppingWritesWhatWasHandedOverFirst() throws {
        let hub = EventHub(initialFrame: frame(0), retryMilliseconds: 2000, writers: 2)
        try hub.startWriters()
        let connections = (0..<4).map { _ in RecordingConnection(directWrites: .written) }
        for connection in connections { _ = parkedStream(on: hub, connection) }
        hub.publish(frame(1))
        hub.stopWriters()
        for connection in connections { #expect(connection.writes.map(\.text) == ["id: 1\n\n"]) }
        hub.publish(frame(2))
        hub.flush()  // returns at once: nothing runs any more
        for connection in connections { #expect(connection.writes.count == 1) }
    }

    @Test func aWriterIsNotASwiftPoolThread() throws {
        let hub = EventHub(initialFrame: frame(0), retryMilliseconds: 2000)
        try hub.startWriters()
        let gate = GatedConnection()
        _ = parkedStream(on: hub, gate)
        hub.publish(frame(1))
        gate.waitUntilWriting()
        #expect(gate.threadName == "reachd-fanout")
        gate.open()
        hub.flush()
    }
}

/// A parked connection whose direct writes wait at a gate until the test opens it, recording
/// what was written and on which thread.
final class GatedConnection: StreamConnection {
    private struct State {
        var texts: [String] = []
        var threads: [pthread_t] = []
        var threadName = ""
    }

    private let state = Mutex(State())
    private let writing = DispatchSemaphore(value: 0)
    private let gate = DispatchSemaphore(value: 0)
    private let isOpen = Atomic(false)

    var texts: [String] { state.withLock { $0.texts } }
    var writingThreads: [pthread_t] { state.withLock { $0.threads } }
    var threadName: String { state.withLock { $0.threadName } }

    func waitUntilWriting() { writing.wait() }

    func open() {
        isOpen.store(true, ordering: .sequentiallyConsistent)
        gate.signal()
    }

    func writeNow(_ bytes: [UInt8]) -> DirectWrite {
        var name = [UInt8](repeating: 0, count: 32)
        let file = Glibc.open("/proc/thread-self/comm", O_RDONLY)
        let count = read(file, &name, name.count)
        close(file)
        state.withLock { state in
            state.texts.append(String(decoding: bytes, as: UTF8.self))
            state.threads.append(pthread_self())
            state.threadName = String(decoding: name.prefix(max(0, count - 1)), as: UTF8.self)
        }
        if !isOpen.load(ordering: .sequentiallyConsistent) {
            writing.signal()
            gate.wait()
        }
        return .written
    }

    func suspend() {}
    func resume() {}
    func clientHasLeft() -> Bool { false }
}
