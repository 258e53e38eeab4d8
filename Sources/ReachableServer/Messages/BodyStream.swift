/// A response body written while the connection lives (an `/events` stream). The daemon reads
/// it on its own threads; `read` may park the connection (`StreamConnection.suspend`) when
/// nothing is pending.
protocol BodyStream: AnyObject, Sendable {
    /// Fills `buffer` with what is pending.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> BodyStreamRead

    /// The daemon finished the request: the connection is no longer the stream's to touch.
    func markDead()
}

/// What one `BodyStream.read` did.
enum BodyStreamRead: Equatable {
    /// Wrote this many bytes (more than 0).
    case wrote(Int)
    /// Nothing to write: the connection was suspended until something is.
    case suspended
    /// Closing and everything written: the daemon ends the response.
    case ended
    /// The connection cannot go on (a direct write failed, or a heartbeat found the client
    /// gone): the daemon aborts it without writing more.
    case failed
}
