import Reachable
import Synchronization

/// The current status, encoded once per change into its SSE frame, which every stream shares;
/// the `/status` response serves the document's slice of that frame (shared by every request,
/// never re-encoded or copied).
final class StatusSnapshot: Sendable {
    private struct Current {
        var status: ReachabilityStatus
        var frame: EventFrame.Status
        var response: SharedResponse
    }

    static let headers = [HTTPField("Content-Type", "application/json"), HTTPField("Cache-Control", "no-cache")]

    private let current: Mutex<Current>
    /// Added to every `/status` answer (CORS: `Access-Control-Allow-Origin: *` or `Vary: Origin`).
    let extraHeaders: [HTTPField]

    init(_ status: ReachabilityStatus, extraHeaders: [HTTPField] = []) {
        self.extraHeaders = extraHeaders
        let frame = EventFrame.status(status)
        current = Mutex(
            Current(status: status, frame: frame, response: Self.response(for: frame, extraHeaders: extraHeaders)))
    }

    var status: ReachabilityStatus { current.withLock { $0.status } }

    /// The encoded document (a slice of the SSE frame), for an answer that needs headers of its
    /// own (a listed CORS origin) and for `/changes`.
    var json: ArraySlice<UInt8> { current.withLock { $0.frame.document } }

    /// The current status's SSE frame.
    var frame: [UInt8] { current.withLock { $0.frame.bytes } }

    /// The `/status` response for the current status. A request that holds it keeps it alive
    /// after the next change replaces it.
    var response: SharedResponse { current.withLock { $0.response } }

    /// Installs a new status; returns its SSE frame for the streams.
    func update(_ status: ReachabilityStatus) -> [UInt8] {
        install(status).frame
    }

    /// Installs a new status; returns its SSE frame for the streams, and the status it replaced:
    /// the caller lets that go once the streams have the frame. It is often the last reference to
    /// the previous document's entries, and releasing a fleet's entries at a link-down took
    /// milliseconds between the document and its streams (docs/scale.md).
    func install(_ status: ReachabilityStatus) -> (frame: [UInt8], replaced: ReachabilityStatus) {
        let frame = EventFrame.status(status, expectedSize: current.withLock { $0.frame.json.count })
        let response = Self.response(for: frame, extraHeaders: extraHeaders)
        // The previous response is handed out of the lock and released there (with the daemon's
        // prepared form of it), or later by a request that still holds it.
        let (_, replaced) = current.withLock { current in
            defer { current = Current(status: status, frame: frame, response: response) }
            return (current.response, current.status)
        }
        return (frame.bytes, replaced)
    }

    private static func response(for frame: EventFrame.Status, extraHeaders: [HTTPField]) -> SharedResponse {
        SharedResponse(headers: headers + extraHeaders, body: frame.document)
    }
}
