import CMicroHTTPD
import Reachable

/// Answers each request on libmicrohttpd's threads: never waits on an actor, never encodes the
/// status (the snapshot holds it encoded).
final class RequestRouter: HTTPHandler {
    private let monitor: NetworkMonitor
    private let snapshot: StatusSnapshot
    private let hub: EventHub
    private let daemon: HTTPDaemon
    private let readiness: ServerConfiguration.ReadinessPolicy
    private let rejections: RejectionLog
    let connectionTimeout: UInt32

    init(
        monitor: NetworkMonitor, snapshot: StatusSnapshot, hub: EventHub, daemon: HTTPDaemon,
        configuration: ServerConfiguration, rejections: RejectionLog
    ) {
        self.rejections = rejections
        readiness = configuration.readiness
        connectionTimeout = UInt32(configuration.connectionTimeout)
        self.monitor = monitor
        self.snapshot = snapshot
        self.hub = hub
        self.daemon = daemon
    }

    func respond(
        to request: HTTPRequest, on connection: OpaquePointer,
        context: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        switch Route(request) {
        case .status:
            return snapshot.send(on: connection)
        case .events where request.method == "HEAD":
            return Response.send(connection, status: 200, body: [], headers: Self.eventStreamHeaders)
        case .events:
            return openStream(connection, context: context)
        case .liveness:
            let (status, body) = HealthDocument.liveness(failure: monitor.failure.map { "\($0)" })
            return sendHealth(connection, status: status, body: body)
        case .readiness:
            let (status, body) = HealthDocument.readiness(
                status: snapshot.status, policy: readiness, isShuttingDown: daemon.isDraining
            )
            return sendHealth(connection, status: status, body: body)
        case .problem(let problem):
            rejections.rejected(request, status: problem.status)
            return Response.problem(connection, problem)
        }
    }

    func completed(context: UnsafeMutableRawPointer) {
        let stream = Unmanaged<EventStream>.fromOpaque(context).takeRetainedValue()
        hub.remove(stream)
    }

    /// `X-Accel-Buffering: no` keeps nginx from buffering the stream.
    static let eventStreamHeaders = [
        ("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"), ("X-Accel-Buffering", "no"),
    ]

    private func sendHealth(_ connection: OpaquePointer, status: Int, body: [UInt8]) -> MHD_Result {
        Response.send(
            connection, status: status, body: body,
            headers: [("Content-Type", "application/health+json"), ("Cache-Control", "no-store")]
        )
    }

    /// A chunked response of unknown length whose reader is the stream; each connection gets
    /// its own response object, because the reader may suspend it. (HEAD gets an empty body
    /// instead: libmicrohttpd 0.9.75 would still send the final chunk of a chunked HEAD answer.)
    private func openStream(
        _ connection: OpaquePointer, context: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        let stream = hub.open(connection: connection)
        let reader = Unmanaged.passRetained(stream).toOpaque()
        guard
            let response = MHD_create_response_from_callback(
                reachd_mhd_size_unknown, 1024, readStream, reader, releaseStream
            )
        else {
            Unmanaged<EventStream>.fromOpaque(reader).release()
            hub.remove(stream)
            return MHD_Result.NO
        }
        defer { MHD_destroy_response(response) }
        for (name, value) in Self.eventStreamHeaders {
            MHD_add_response_header(response, name, value)
        }
        // The request slot keeps its own reference until libmicrohttpd reports completion.
        context.pointee = Unmanaged.passRetained(stream).toOpaque()
        return MHD_queue_response(connection, 200, response)
    }
}

private let readStream: MHD_ContentReaderCallback = { cls, _, buffer, capacity in
    guard let cls, let buffer else { return reachd_mhd_end_with_error }
    return Unmanaged<EventStream>.fromOpaque(cls).takeUnretainedValue().read(into: buffer, capacity: capacity)
}

private let releaseStream: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    Unmanaged<EventStream>.fromOpaque(cls).release()
}
