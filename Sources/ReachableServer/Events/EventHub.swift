import Dispatch
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
        /// Waiters of `waitUntilEmpty`, fired when the last stream is removed.
        var emptyWaiters: [OneShotSignal] = []
    }

    private let state: Mutex<State>
    private let retryMilliseconds: Int
    /// How many threads write one change to the streams (the HTTP engine's thread count).
    private let writers: Int

    init(initialFrame: [UInt8], retryMilliseconds: Int, writers: Int = 1) {
        state = Mutex(State(latestFrame: initialFrame))
        self.retryMilliseconds = retryMilliseconds
        self.writers = max(1, writers)
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
        let waiters = state.withLock { state -> [OneShotSignal] in
            state.streams.removeValue(forKey: ObjectIdentifier(stream))
            guard state.streams.isEmpty else { return [] }
            defer { state.emptyWaiters = [] }
            return state.emptyWaiters
        }
        for waiter in waiters { waiter.fire() }
    }

    /// Hands a change's frame, encoded once, to every stream; returns how many streams it went to.
    ///
    /// Most streams are parked and written right here (`EventStream.offer`): one system call
    /// each. With many of them the work is split over `writers` threads, this one and pool
    /// threads, so a change reaches the last client as soon as the cores allow.
    @discardableResult
    func publish(_ frame: [UInt8]) -> Int {
        let streams = state.withLock { state in
            state.latestFrame = frame
            return Array(state.streams.values)
        }
        let parts = streams.count >= Self.streamsWorthSplitting ? writers : 1
        if parts == 1 {
            for stream in streams { stream.offer(frame: frame) }
        } else {
            DispatchQueue.concurrentPerform(iterations: parts) { part in
                for index in stride(from: part, to: streams.count, by: parts) { streams[index].offer(frame: frame) }
            }
        }
        return streams.count
    }

    /// Below this many streams one thread writes them all (a few ms at ~10 µs a write): not worth
    /// waking a second thread for. A choice, not a measured optimum.
    private static let streamsWorthSplitting = 256

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

    /// Returns when no stream is left, or at `deadline`, whichever comes first.
    ///
    /// Waits on a signal rather than polling: shutdown often runs in a cancelled task, where
    /// `Task.sleep` returns at once, so a polling loop would spin a core until the deadline.
    func waitUntilEmpty(deadline: ContinuousClock.Instant) async {
        let signal = OneShotSignal()
        let isEmpty = state.withLock { state in
            if !state.streams.isEmpty { state.emptyWaiters.append(signal) }
            return state.streams.isEmpty
        }
        guard !isEmpty else { return }
        // Unstructured, so it does not inherit the caller's cancellation and really sleeps.
        let timer = Task {
            try? await Task.sleep(until: deadline, clock: .continuous)
            signal.fire()
        }
        await signal.wait()
        timer.cancel()
    }

    /// The usual delay plus up to 3 s of jitter, so clients spread their reconnects.
    private func finalRetry() -> [UInt8] {
        EventFrame.finalRetry(milliseconds: retryMilliseconds + Int.random(in: 0..<3000))
    }
}
