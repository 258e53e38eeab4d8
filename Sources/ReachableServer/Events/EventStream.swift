import Synchronization

/// One `/events` connection: what it still has to write, and whether its connection is parked
/// waiting for something to write.
///
/// Holds at most one pending status frame, replaced by the newest (status is state, not a
/// log), so a slow reader costs one frame of memory and never slows anybody else.
///
/// A parked (suspended) connection with nothing pending is written directly by whoever offers
/// the frame (`StreamConnection.writeNow`): one system call, no resume, no wake-up of the
/// daemon. Only when that cannot take the whole frame is the connection resumed, and the
/// daemon writes it through `read` when the client reads again.
///
/// A class with a mutex, not an actor: the daemon calls `read` on its own threads, which
/// cannot await. Suspending happens inside `read`, under the lock, and a resume or a direct
/// write is taken from the same lock, so a connection is resumed only after it was suspended
/// and only once, and written directly only while suspended.
final class EventStream: BodyStream {
    typealias Read = BodyStreamRead

    private struct State {
        /// Control lines (`retry:`, keep-alive comments): always delivered, in order.
        var control: [UInt8]
        /// The newest status frame not yet started.
        var frame: [UInt8]?
        /// Written after everything else once the stream is closing.
        var trailer: [UInt8]?
        /// The chunk being written and how far.
        var current: [UInt8] = []
        var offset = 0
        var isSuspended = false
        var isClosing = false
        /// The connection ended (client left or stream finished): never resume again.
        var isDead = false
        /// A direct write failed or a heartbeat found the client gone: the response cannot go on.
        var isBroken = false

        var hasPending: Bool { offset < current.count || !control.isEmpty || frame != nil }

        /// Moves the next chunk into `current`: control first, then the frame, then the trailer.
        mutating func advance() -> Bool {
            if !control.isEmpty {
                current = control
                control = []
            } else if let next = frame {
                current = next
                frame = nil
            } else if isClosing, let last = trailer {
                current = last
                trailer = nil
            } else {
                return false
            }
            offset = 0
            return true
        }

        /// If suspended, clears the flag and tells the caller to resume: exactly one caller
        /// does, and only after the reader's suspend (both happen under the lock).
        mutating func takeSuspension() -> Bool {
            guard isSuspended, !isDead else { return false }
            isSuspended = false
            return true
        }
    }

    private let connection: any StreamConnection
    private let state: Mutex<State>

    init(connection: any StreamConnection, preamble: [UInt8], frame: [UInt8]) {
        self.connection = connection
        state = Mutex(State(control: preamble, frame: frame))
    }

    /// Fills `buffer` with what is pending. With nothing to write, the connection is suspended
    /// inside the lock (so a resume can only follow it); once closing and empty, the stream ends.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Read {
        state.withLock { state in
            if state.isBroken { return .failed }
            var written = 0
            while written < buffer.count {
                if state.offset >= state.current.count {
                    guard state.advance() else { break }
                }
                let count = min(buffer.count - written, state.current.count - state.offset)
                state.current.withUnsafeBytes { source in
                    let chunk = UnsafeRawBufferPointer(rebasing: source[state.offset..<(state.offset + count)])
                    UnsafeMutableRawBufferPointer(rebasing: buffer[written..<(written + count)]).copyMemory(from: chunk)
                }
                state.offset += count
                written += count
            }
            if written > 0 { return .wrote(written) }
            if state.isClosing { return .ended }
            state.isSuspended = true
            connection.suspend()
            return .suspended
        }
    }

    /// Writes a newer status frame: directly if the connection is parked and takes it whole,
    /// otherwise it replaces the pending frame and the connection is woken.
    func offer(frame: [UInt8]) {
        let wake = state.withLock { state -> Bool in
            guard !state.isDead, !state.isClosing else { return false }
            if writeDirectly(frame, &state) { return false }
            if !state.isBroken { state.frame = frame }
            return state.takeSuspension()
        }
        if wake { connection.resume() }
    }

    /// Writes a keep-alive comment unless something is already waiting to be written; ends
    /// the stream instead if its client has gone. Writing cannot tell: the first write after a
    /// client left succeeds (it only draws the client's reset), so a departed client would
    /// hold its slot until the second heartbeat.
    func heartbeat() {
        let wake = state.withLock { state -> Bool in
            guard !state.isDead, !state.isClosing, !state.hasPending else { return false }
            if state.isSuspended && connection.clientHasLeft() {
                state.isBroken = true
                return state.takeSuspension()
            }
            if writeDirectly(EventFrame.keepAlive, &state) { return false }
            if !state.isBroken { state.control = EventFrame.keepAlive }
            return state.takeSuspension()
        }
        if wake { connection.resume() }
    }

    /// The fast path: a parked connection with nothing pending is written at once. Returns
    /// whether `bytes` went out; on a broken connection marks the stream so the daemon aborts it
    /// once resumed.
    private func writeDirectly(_ bytes: [UInt8], _ state: inout State) -> Bool {
        guard state.isSuspended, !state.hasPending, !state.isBroken else { return false }
        switch connection.writeNow(bytes) {
        case .written: return true
        case .notNow: return false
        case .failed:
            state.isBroken = true
            return false
        }
    }

    /// Finishes the stream: what is pending, then `trailer`, then the end of the response.
    func close(trailer: [UInt8]) {
        let wake = state.withLock { state -> Bool in
            guard !state.isDead, !state.isClosing else { return false }
            state.isClosing = true
            state.trailer = trailer
            return state.takeSuspension()
        }
        if wake { connection.resume() }
    }

    /// The daemon finished the request: the connection is no longer ours to touch.
    func markDead() {
        state.withLock { $0.isDead = true }
    }
}
