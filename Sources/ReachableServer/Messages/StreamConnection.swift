/// What an event stream needs from the connection it writes to: to park it while there is
/// nothing to write, to wake it when there is, and — while it is parked — to write a frame
/// straight away. The HTTP daemon implements it (`HTTP/`); tests use a recorder.
///
/// The daemon's rules, which `EventStream` keeps: `suspend()` is called only from inside the
/// stream's own `read` while nothing is pending, and `resume()` exactly once after each
/// suspension, never after the connection has ended. `writeNow` is called only while the
/// connection is suspended (the daemon then neither writes to it nor reads from it).
protocol StreamConnection: Sendable {
    func suspend()
    func resume()
    /// Writes `bytes` as the next piece of the response body, all of it or nothing, without
    /// waiting. The fan-out's fast path: one system call per client per change, no resume.
    func writeNow(_ bytes: [UInt8]) -> DirectWrite
    /// Whether the client has gone (its FIN or a reset arrived). Asked only while suspended:
    /// the daemon does not read a suspended connection, and a write to a client that left
    /// cleanly succeeds (it only draws the client's reset), so nothing else would notice.
    func clientHasLeft() -> Bool
}

/// What `StreamConnection.writeNow` did.
enum DirectWrite: Equatable {
    /// Every byte is on its way.
    case written
    /// Nothing was written (the client's socket is not idle, or the connection cannot take
    /// direct writes): resume the connection and let the daemon write it when the client reads.
    case notNow
    /// The connection is broken (the client left), or only part was written: the response can
    /// no longer be continued and the connection must end.
    case failed
}
