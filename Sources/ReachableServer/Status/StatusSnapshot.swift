import Reachable
import Synchronization

/// The current status, encoded once per change: the `/status` response (shared by every request,
/// never re-encoded or copied) and the SSE frame every stream shares.
final class StatusSnapshot: Sendable {
    private struct Current {
        var status: ReachabilityStatus
        var json: [UInt8]
        var response: SharedResponse
    }

    static let headers = [HTTPField("Content-Type", "application/json"), HTTPField("Cache-Control", "no-cache")]

    private let current: Mutex<Current>
    /// Added to every `/status` answer (CORS: `Access-Control-Allow-Origin: *` or `Vary: Origin`).
    let extraHeaders: [HTTPField]

    init(_ status: ReachabilityStatus, extraHeaders: [HTTPField] = []) {
        self.extraHeaders = extraHeaders
        let json = status.jsonBytes()
        current = Mutex(
            Current(status: status, json: json, response: Self.response(for: json, extraHeaders: extraHeaders)))
    }

    var status: ReachabilityStatus { current.withLock { $0.status } }

    /// The encoded document, for an answer that needs headers of its own (a listed CORS origin).
    var json: [UInt8] { current.withLock { $0.json } }

    /// The `/status` response for the current status. A request that holds it keeps it alive
    /// after the next change replaces it.
    var response: SharedResponse { current.withLock { $0.response } }

    /// Installs a new status; returns its SSE frame for the streams.
    func update(_ status: ReachabilityStatus) -> [UInt8] {
        let json = status.jsonBytes(expectedSize: current.withLock { $0.json.count })
        let response = Self.response(for: json, extraHeaders: extraHeaders)
        // The previous response is handed out of the lock and released there (with the daemon's
        // prepared form of it), or later by a request that still holds it.
        _ = current.withLock { current in
            defer { current = Current(status: status, json: json, response: response) }
            return current.response
        }
        return EventFrame.status(status, json: json)
    }

    private static func response(for json: [UInt8], extraHeaders: [HTTPField]) -> SharedResponse {
        SharedResponse(headers: headers + extraHeaders, body: json)
    }
}
