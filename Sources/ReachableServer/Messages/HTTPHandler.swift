/// What the HTTP daemon calls for every request, on its own threads: a handler answers at once
/// and never blocks or awaits.
protocol HTTPHandler: Sendable {
    /// The answer to `request`. `connection` is only for a stream the answer opens.
    func respond(to request: HTTPRequest, on connection: any StreamConnection) -> HTTPResponse

    /// A stream this handler answered with has ended (finished, or the client left). The daemon
    /// has already marked it dead, so it never touches the connection again.
    func streamEnded(_ stream: any BodyStream)
}
