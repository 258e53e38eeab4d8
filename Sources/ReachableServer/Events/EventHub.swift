import Reachable
import Synchronization

/// Every open `/events` stream, and the frame a new one starts with. Hands each change to the
/// fan-out writers, once.
///
/// A class with a mutex: streams are opened and removed on the daemon's threads, which cannot
/// await.
final class EventHub: Sendable {
    private struct State {
        var latestFrame: [UInt8]
        /// Counts the frames published: a stream started with frame `n` is written from `n + 1` on.
        var generation: UInt64 = 0
        var count = 0
        var isClosing = false
        /// Waiters of `waitUntilEmpty`, fired when the last stream is removed.
        var emptyWaiters: [OneShotSignal] = []
    }

    private let state: Mutex<State>
    private let retryMilliseconds: Int
    /// The threads that write changes to the streams, each to its own share of them.
    private let writers: [FanOutWriter]

    /// - Parameter writers: how many threads write changes to the streams (the HTTP daemon's
    ///   thread count); they run from `startWriters()` to `stopWriters()`.
    init(initialFrame: [UInt8], retryMilliseconds: Int, writers: Int = 1) {
        state = Mutex(State(latestFrame: initialFrame))
        self.retryMilliseconds = retryMilliseconds
        self.writers = (0..<max(1, writers)).map { _ in FanOutWriter() }
    }

    deinit {
        stopWriters()
    }

    func startWriters() throws(SystemError) {
        do {
            for writer in writers { try writer.start() }
        } catch {
            stopWriters()
            throw error
        }
    }

    /// Writes what was handed over, then ends the writer threads. Idempotent.
    func stopWriters() {
        for writer in writers { writer.stop() }
    }

    /// Returns once every change and heartbeat handed over before the call is written.
    func flush() {
        for writer in writers { writer.flush() }
    }

    var count: Int { state.withLock { $0.count } }

    /// A stream for a new connection, starting with `retry:` and the latest frame. Registered
    /// under the same lock that publishes, so no change falls between its first frame and the next.
    func open(connection: any StreamConnection) -> EventStream {
        let (stream, isClosing) = state.withLock { state in
            let stream = EventStream(
                connection: connection, preamble: EventFrame.retry(milliseconds: retryMilliseconds),
                frame: state.latestFrame
            )
            writer(of: ObjectIdentifier(stream)).add(stream, startedAt: state.generation)
            state.count += 1
            return (stream, state.isClosing)
        }
        if isClosing { stream.close(trailer: finalRetry()) }
        return stream
    }

    /// Forgets a stream whose connection has ended.
    func remove(_ stream: any BodyStream) {
        let id = ObjectIdentifier(stream)
        let waiters = state.withLock { state -> [OneShotSignal] in
            if writer(of: id).remove(id) { state.count -= 1 }
            guard state.count == 0 else { return [] }
            defer { state.emptyWaiters = [] }
            return state.emptyWaiters
        }
        for waiter in waiters { waiter.fire() }
    }

    /// Hands a change's frame, encoded once, to the writers and returns at once: how many
    /// streams it goes to. Each writer writes it to its streams on its own thread (most are
    /// parked and take it directly, one system call each: `EventStream.offer`).
    @discardableResult
    func publish(_ frame: [UInt8]) -> Int {
        let (generation, count) = state.withLock { state in
            state.latestFrame = frame
            state.generation += 1
            return (state.generation, state.count)
        }
        for writer in writers { writer.write(frame, generation: generation) }
        return count
    }

    /// A keep-alive comment on every idle stream, written by the writers.
    func heartbeat() {
        for writer in writers { writer.heartbeat() }
    }

    /// Ends every stream (and any opened from now on) after what it has pending.
    func closeAll() {
        state.withLock { $0.isClosing = true }
        for writer in writers {
            for stream in writer.streams { stream.close(trailer: finalRetry()) }
        }
    }

    /// Returns when no stream is left, or at `deadline`, whichever comes first.
    ///
    /// Waits on a signal rather than polling: shutdown often runs in a cancelled task, where
    /// `Task.sleep` returns at once, so a polling loop would spin a core until the deadline.
    func waitUntilEmpty(deadline: ContinuousClock.Instant) async {
        let signal = OneShotSignal()
        let isEmpty = state.withLock { state in
            if state.count > 0 { state.emptyWaiters.append(signal) }
            return state.count == 0
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

    /// Each stream belongs to one writer, chosen by its identity.
    private func writer(of id: ObjectIdentifier) -> FanOutWriter {
        writers[Int(UInt(bitPattern: id.hashValue) % UInt(writers.count))]
    }

    /// The usual delay plus up to 3 s of jitter, so clients spread their reconnects.
    private func finalRetry() -> [UInt8] {
        EventFrame.finalRetry(milliseconds: retryMilliseconds + Int.random(in: 0..<3000))
    }
}
