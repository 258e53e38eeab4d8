/// What an event stream needs from the connection it writes to: to park it while there is
/// nothing to write, and to wake it when there is. The HTTP engine implements it (`HTTP/`);
/// tests use a recorder.
///
/// The engine's rules, which `EventStream` keeps: `suspend()` is called only from inside the
/// stream's own `read` while nothing is pending, and `resume()` exactly once after each
/// suspension, never after the connection has ended.
protocol StreamConnection: Sendable {
    func suspend()
    func resume()
    /// Whether the client has gone (its FIN or a reset arrived). Asked only while suspended:
    /// the engine does not read a suspended connection, so nothing else would notice.
    func clientHasLeft() -> Bool
}
