import CMicroHTTPD
import Reachable
import Synchronization

/// The current status, encoded once per change: the `/status` response (created once and
/// queued on every request, never re-encoded) and the SSE frame every stream shares.
final class StatusSnapshot: Sendable {
    private struct Current: @unchecked Sendable {
        // Unchecked: the response is reference-counted by libmicrohttpd and only used under the lock.
        var status: ReachabilityStatus
        var response: OpaquePointer
    }

    private let current: Mutex<Current>

    init(_ status: ReachabilityStatus) {
        current = Mutex(Current(status: status, response: Self.response(for: status.jsonBytes())))
    }

    deinit {
        current.withLock { MHD_destroy_response($0.response) }
    }

    var status: ReachabilityStatus { current.withLock { $0.status } }

    /// Installs a new status; returns its SSE frame for the streams.
    func update(_ status: ReachabilityStatus) -> [UInt8] {
        let json = status.jsonBytes()
        let response = Self.response(for: json)
        let old = current.withLock { current in
            defer { current = Current(status: status, response: response) }
            return current.response
        }
        // Connections that queued the old response hold their own reference.
        MHD_destroy_response(old)
        return EventFrame.status(status, json: json)
    }

    /// Queues the current `/status` response. Under the lock, so the response cannot be
    /// destroyed between being read and being queued (queueing takes its own reference).
    func send(on connection: OpaquePointer) -> MHD_Result {
        current.withLock { MHD_queue_response(connection, 200, $0.response) }
    }

    private static func response(for json: [UInt8]) -> OpaquePointer {
        Response.make(
            body: json,
            headers: [("Content-Type", "application/json"), ("Cache-Control", "no-cache")]
        )
    }
}
