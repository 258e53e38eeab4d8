import Synchronization

/// Every open `/events` stream, and the frame a new one starts with. Fans each change out once.
///
/// A class with a mutex: streams are opened and removed on the engine's threads, which cannot
/// await.
final class EventHub: Sendable {
    private struct State {
        var streams: [ObjectIdentifier: EventStream] = [:]
        var latestFrame: [UInt8]
        var isClosing = false
    }

    private let state: Mutex<State>
    private let retryMilliseconds: Int

    init(initialFrame: [UInt8], retryMilliseconds: Int) {
        state = Mutex(State(latestFrame: initialFrame))
        self.retryMilliseconds = retryMilliseconds
    }

    var count: Int { state.withLock { $0.streams.count } }

    /// A stream for a new connection, starting with `retry:` and the latest frame. Registered
    /// under the same lock that publishes, so no change falls between its first frame and the next.
    func open(connection: any StreamConnection) -> EventStream {
        let (stream, isClosing) = state.withLock { state in
            let stream = EventStream(
                connection: connection, preamble: EventFrame.retry(milliseconds: retryMilliseconds),
                frame: state.latestFrame
            )
            state.streams[ObjectIdentifier(stream)] = stream
            return (stream, state.isClosing)
        }
        if isClosing { stream.close(trailer: finalRetry()) }
        return stream
    }

    /// Forgets a stream whose connection has ended.
    func remove(_ stream: EventStream) {
        _ = state.withLock { $0.streams.removeValue(forKey: ObjectIdentifier(stream)) }
    }

    /// Hands a change's frame, encoded once, to every stream.
    func publish(_ frame: [UInt8]) {
        let streams = state.withLock { state in
            state.latestFrame = frame
            return Array(state.streams.values)
        }
        for stream in streams { stream.offer(frame: frame) }
    }

    func heartbeat() {
        for stream in state.withLock({ Array($0.streams.values) }) { stream.heartbeat() }
    }

    /// Ends every stream (and any opened from now on) after what it has pending.
    func closeAll() {
        let streams = state.withLock { state in
            state.isClosing = true
            return Array(state.streams.values)
        }
        for stream in streams { stream.close(trailer: finalRetry()) }
    }

    /// The usual delay plus up to 3 s of jitter, so clients spread their reconnects.
    private func finalRetry() -> [UInt8] {
        EventFrame.finalRetry(milliseconds: retryMilliseconds + Int.random(in: 0..<3000))
    }
}
