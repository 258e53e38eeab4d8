import Reachable
import Synchronization

/// The current status, encoded once per change: the `/status` response (made once and queued
/// on every request, never re-encoded or copied) and the SSE frame every stream shares.
final class StatusSnapshot: Sendable {
    private struct Current {
        var status: ReachabilityStatus
        var response: PreparedResponse
    }

    static let headers = [HTTPField("Content-Type", "application/json"), HTTPField("Cache-Control", "no-cache")]

    private let current: Mutex<Current>

    init(_ status: ReachabilityStatus) {
        current = Mutex(Current(status: status, response: Self.response(for: status.jsonBytes())))
    }

    var status: ReachabilityStatus { current.withLock { $0.status } }

    /// The `/status` response for the current status. A request that holds it keeps it alive
    /// after the next change replaces it.
    var response: PreparedResponse { current.withLock { $0.response } }

    /// Installs a new status; returns its SSE frame for the streams.
    func update(_ status: ReachabilityStatus) -> [UInt8] {
        let json = status.jsonBytes()
        let response = Self.response(for: json)
        // The previous response is handed out of the lock and released there (its deinit calls
        // libmicrohttpd), or later by a request that still holds it.
        _ = current.withLock { current in
            defer { current = Current(status: status, response: response) }
            return current.response
        }
        return EventFrame.status(status, json: json)
    }

    private static func response(for json: [UInt8]) -> PreparedResponse {
        PreparedResponse(headers: headers, body: json)
    }
}
