import CMicroHTTPD
import Synchronization

/// One `/events` connection: what it still has to write, and whether libmicrohttpd's
/// connection is suspended waiting for something to write.
///
/// Holds at most one pending status frame, replaced by the newest (status is state, not a
/// log), so a slow reader costs one frame of memory and never slows anybody else.
///
/// Unchecked `Sendable`: the only non-Sendable member is libmicrohttpd's connection handle,
/// which is only used under `state`'s lock and only while the connection is alive.
final class EventStream: @unchecked Sendable {
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
        /// The request completed (client left or stream ended): never resume again.
        var isDead = false

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
    }

    private let connection: OpaquePointer
    private let state: Mutex<State>

    init(connection: OpaquePointer, preamble: [UInt8], frame: [UInt8]) {
        self.connection = connection
        state = Mutex(State(control: preamble, frame: frame))
    }

    /// libmicrohttpd asks for bytes. Returns how many were written; when there are none, the
    /// connection is suspended (inside the lock, so a resume can only follow it) and 0 is
    /// returned; once closing and empty, end of stream.
    func read(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Int {
        state.withLock { state in
            var written = 0
            while written < capacity {
                if state.offset >= state.current.count {
                    guard state.advance() else { break }
                }
                let count = min(capacity - written, state.current.count - state.offset)
                state.current.withUnsafeBytes { source in
                    (buffer + written).copyMemory(from: source.baseAddress! + state.offset, byteCount: count)
                }
                state.offset += count
                written += count
            }
            if written > 0 { return written }
            if state.isClosing { return reachd_mhd_end_of_stream }
            state.isSuspended = true
            MHD_suspend_connection(connection)
            return 0
        }
    }

    /// Replaces the pending status frame with a newer one and wakes the connection.
    func offer(frame: [UInt8]) {
        let wake = state.withLock { state -> Bool in
            guard !state.isDead, !state.isClosing else { return false }
            state.frame = frame
            return Self.takeSuspension(&state)
        }
        if wake { MHD_resume_connection(connection) }
    }

    /// Writes a keep-alive comment unless something is already waiting to be written.
    func heartbeat() {
        let wake = state.withLock { state -> Bool in
            guard !state.isDead, !state.isClosing, !state.hasPending else { return false }
            state.control = EventFrame.keepAlive
            return Self.takeSuspension(&state)
        }
        if wake { MHD_resume_connection(connection) }
    }

    /// Finishes the stream: what is pending, then `trailer`, then the chunked end of stream.
    func close(trailer: [UInt8]) {
        let wake = state.withLock { state -> Bool in
            guard !state.isDead, !state.isClosing else { return false }
            state.isClosing = true
            state.trailer = trailer
            return Self.takeSuspension(&state)
        }
        if wake { MHD_resume_connection(connection) }
    }

    /// libmicrohttpd finished the request: the connection handle is no longer ours to touch.
    func markDead() {
        state.withLock { $0.isDead = true }
    }

    /// If suspended, clears the flag and tells the caller to resume — exactly one caller does,
    /// and only after the reader's suspend (both happen under the lock).
    private static func takeSuspension(_ state: inout State) -> Bool {
        guard state.isSuspended else { return false }
        state.isSuspended = false
        return true
    }
}
