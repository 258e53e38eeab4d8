/// What a running application is asked from outside: to shut down gracefully, or to read its
/// files again (`--targets-file`, `--web-config-file`). The process's come from SIGTERM and SIGINT
/// and from SIGHUP (`ProcessSignals`); a test makes its own and asks directly.
///
/// A request is kept until the application takes it: a shutdown asked for while it still starts
/// is answered as soon as its group runs, never lost.
public final class ControlRequests: Sendable {
    /// Each shutdown asked for; one kept is enough, it is answered once.
    let shutdowns: AsyncStream<Void>
    /// Each reload asked for, in order (each is read and reported).
    let reloads: AsyncStream<Void>
    private let shutdownAsked: AsyncStream<Void>.Continuation
    private let reloadAsked: AsyncStream<Void>.Continuation

    public init() {
        (shutdowns, shutdownAsked) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        (reloads, reloadAsked) = AsyncStream.makeStream()
    }

    /// SIGTERM or SIGINT: the graceful shutdown, the same as ServiceGroup's own.
    public func shutDown() {
        shutdownAsked.yield()
    }

    /// SIGHUP: the targets file and the web config read again, once per request.
    public func reload() {
        reloadAsked.yield()
    }
}
