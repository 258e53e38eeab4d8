import Testing

@testable import ReachableServer

/// The per-connection SSE state machine, driven without libmicrohttpd: a recording connection
/// shows when the stream suspends and resumes it.
struct EventStreamTests {
    private let connection = RecordingConnection()
    private let retry = Array("retry: 2000\n".utf8)

    private func frame(_ id: Int) -> [UInt8] {
        Array("id: \(id)\nevent: status\ndata: {\"sequence\":\(id)}\n\n".utf8)
    }

    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    private func makeStream(startingWith first: Int = 1) -> EventStream {
        EventStream(connection: connection, preamble: retry, frame: frame(first))
    }

    /// A stream that has written its opening and is now suspended.
    private func idleStream() -> EventStream {
        let stream = makeStream()
        _ = stream.readAvailable()
        return stream
    }

    @Test func theFirstReadGivesRetryThenTheLatestFrame() {
        let stream = makeStream(startingWith: 7)
        let (text, result) = stream.readText()
        #expect(text == self.text(retry + frame(7)))
        #expect(result == .wrote(retry.count + frame(7).count))
    }

    @Test func smallReadsDeliverTheSameBytesInPieces() {
        let stream = makeStream()
        let (text, stop) = stream.readAvailable(capacity: 5)
        #expect(text == self.text(retry + frame(1)))
        #expect(stop == .suspended)
    }

    @Test func aPendingFrameIsReplacedByTheNewest() {
        let stream = idleStream()
        stream.offer(frame: frame(2))
        stream.offer(frame: frame(3))
        stream.offer(frame: frame(4))
        #expect(stream.readAvailable().text == text(frame(4)))
    }

    @Test func aFrameAlreadyStartedIsFinishedBeforeTheNext() {
        let stream = idleStream()
        stream.offer(frame: frame(2))
        let (start, _) = stream.readText(capacity: 10)
        stream.offer(frame: frame(3))
        let (rest, _) = stream.readAvailable()
        #expect(start + rest == text(frame(2) + frame(3)))
    }

    @Test func controlLinesComeBeforeAPendingFrame() {
        let stream = idleStream()
        stream.heartbeat()
        stream.offer(frame: frame(2))
        #expect(stream.readAvailable().text == ": keep-alive\n\n" + text(frame(2)))
    }

    @Test func aHeartbeatIsWrittenOnlyWhenNothingIsPending() {
        let fresh = makeStream()
        fresh.heartbeat()
        #expect(fresh.readAvailable().text == text(retry + frame(1)), "the opening is pending: no keep-alive")

        let idle = idleStream()
        idle.offer(frame: frame(2))
        idle.heartbeat()
        #expect(idle.readAvailable().text == text(frame(2)), "a frame is pending: no keep-alive")

        idle.heartbeat()
        idle.heartbeat()
        #expect(idle.readAvailable().text == ": keep-alive\n\n", "one comment, however many heartbeats")
    }

    @Test func aHeartbeatEndsAStreamWhoseClientHasLeft() {
        let stream = idleStream()
        connection.clientLeaves()
        stream.heartbeat()
        #expect(connection.calls == [.suspend, .resume], "woken to be ended, at this heartbeat")
        stream.offer(frame: frame(2))
        #expect(stream.readText().result == .failed, "nothing more is written to a departed client")
        #expect(stream.readText().result == .failed)
    }

    @Test func aClientLeavingIsAskedOnlyWhileSuspended() {
        let busy = makeStream()
        connection.clientLeaves()
        busy.heartbeat()
        #expect(
            busy.readText().result == .wrote(retry.count + frame(1).count),
            "a stream being written finds out by writing")
    }

    @Test func closeWritesWhatIsPendingThenTheTrailerThenEnds() {
        let stream = idleStream()
        stream.offer(frame: frame(2))
        stream.close(trailer: Array("retry: 4321\n\n".utf8))
        stream.offer(frame: frame(3))
        stream.heartbeat()
        let (text, stop) = stream.readAvailable()
        #expect(text == self.text(frame(2)) + "retry: 4321\n\n")
        #expect(stop == .ended)
        #expect(stream.readText().result == .ended, "an ended stream stays ended")
    }

    @Test func aStreamClosedBeforeItsFirstReadStillWritesItsOpening() {
        let stream = makeStream()
        stream.close(trailer: Array("retry: 4321\n\n".utf8))
        let (text, stop) = stream.readAvailable()
        #expect(text == self.text(retry + frame(1)) + "retry: 4321\n\n")
        #expect(stop == .ended)
        #expect(connection.calls.isEmpty, "never suspended, so never resumed")
    }

    @Test func itSuspendsOnlyWhenNothingIsPending() {
        let stream = makeStream()
        #expect(stream.readText().result == .wrote(retry.count + frame(1).count))
        #expect(connection.calls.isEmpty)
        #expect(stream.readText().result == .suspended)
        #expect(connection.calls == [.suspend])
    }

    @Test func eachSuspensionIsResumedExactlyOnce() {
        let stream = idleStream()
        #expect(connection.calls == [.suspend])
        stream.offer(frame: frame(2))
        stream.offer(frame: frame(3))
        stream.heartbeat()
        #expect(connection.calls == [.suspend, .resume])

        _ = stream.readAvailable()
        stream.heartbeat()
        #expect(connection.calls == [.suspend, .resume, .suspend, .resume])

        _ = stream.readAvailable()
        stream.close(trailer: [])
        stream.close(trailer: [])
        #expect(connection.calls == [.suspend, .resume, .suspend, .resume, .suspend, .resume])
    }

    @Test func aStreamThatIsNotSuspendedIsNeverResumed() {
        let stream = makeStream()
        stream.offer(frame: frame(2))
        stream.heartbeat()
        stream.close(trailer: [])
        #expect(connection.calls.isEmpty)
    }

    @Test func aDeadStreamIsNeverResumed() {
        let stream = idleStream()
        stream.markDead()
        stream.offer(frame: frame(2))
        stream.heartbeat()
        stream.close(trailer: [])
        #expect(connection.calls == [.suspend])
    }

    // The fast path: a parked connection is written directly, without a resume.

    @Test func aParkedStreamIsWrittenDirectlyAndStaysParked() {
        connection.answerDirectWrites(with: .written)
        let stream = idleStream()
        stream.offer(frame: frame(2))
        stream.heartbeat()
        #expect(connection.writes.map(\.text) == [text(frame(2)), ": keep-alive\n\n"])
        #expect(connection.calls == [.suspend], "no resume: nothing is left for the engine")
        #expect(stream.readText().result == .suspended, "nothing pending")
    }

    @Test func whatTheClientCannotTakeNowIsLeftToTheEngine() {
        connection.answerDirectWrites(with: .notNow)
        let stream = idleStream()
        stream.offer(frame: frame(2))
        #expect(connection.writes.map(\.text) == [text(frame(2))])
        #expect(connection.calls == [.suspend, .resume])
        stream.offer(frame: frame(3))
        #expect(connection.writes.count == 1, "not parked any more: the newest frame just replaces the pending one")
        #expect(stream.readAvailable().text == text(frame(3)))
    }

    @Test func aBrokenConnectionIsResumedToBeAborted() {
        connection.answerDirectWrites(with: .failed)
        let stream = idleStream()
        stream.offer(frame: frame(2))
        #expect(connection.calls == [.suspend, .resume])
        #expect(stream.readText().result == .failed)
        stream.offer(frame: frame(3))
        stream.heartbeat()
        #expect(connection.writes.count == 1, "never written again")
        #expect(connection.calls == [.suspend, .resume], "and never resumed again")
    }

    @Test func aStreamBeingWrittenByTheEngineIsNeverWrittenDirectly() {
        connection.answerDirectWrites(with: .written)
        let stream = makeStream()
        stream.offer(frame: frame(2))
        stream.heartbeat()
        #expect(connection.writes.isEmpty)
        #expect(stream.readAvailable().text == text(retry + frame(2)))
    }

    @Test func closingAlwaysGoesThroughTheEngine() {
        connection.answerDirectWrites(with: .written)
        let stream = idleStream()
        stream.close(trailer: Array("retry: 4321\n\n".utf8))
        #expect(connection.writes.isEmpty, "the final chunk is the engine's to write")
        #expect(connection.calls == [.suspend, .resume])
        #expect(stream.readAvailable() == ("retry: 4321\n\n", .ended))
    }
}
