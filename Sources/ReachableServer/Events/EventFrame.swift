import Reachable

/// The SSE wire text reachd writes. A status frame is encoded once per change and the same
/// bytes are shared by every subscriber (an array is copied by reference, not by value).
enum EventFrame {
    /// A status frame, and where the document lies in it: `/status` serves that slice of the
    /// frame, so the document is held once (a fleet's is megabytes).
    struct Status: Sendable {
        let bytes: [UInt8]
        /// The document's place in `bytes`.
        let json: Range<Int>

        var document: ArraySlice<UInt8> { bytes[json] }
    }

    /// `id: 7\nevent: status\ndata: {…}\n\n`, the document written in place (not copied in).
    ///
    /// - Parameter expectedSize: about how large the document will be (the last one's size).
    static func status(_ status: ReachabilityStatus, expectedSize: Int? = nil) -> Status {
        let head = "id: \(status.sequence)\nevent: status\ndata: ".utf8
        var json = 0..<0
        let capacity = head.count + status.jsonCapacity(expectedSize: expectedSize) + 2
        let bytes = JSONWriter.bytes(capacity: capacity) { frame in
            frame.verbatim(head)
            let start = frame.count
            status.write(to: frame)
            json = start..<frame.count
            frame.verbatim("\n\n".utf8)
        }
        return Status(bytes: bytes, json: json)
    }

    /// The reconnect delay, first on every stream.
    static func retry(milliseconds: Int) -> [UInt8] {
        Array("retry: \(milliseconds)\n".utf8)
    }

    /// The last words of a stream at shutdown: the delay with jitter, so thousands of clients do
    /// not reconnect to the next instance at the same instant.
    static func finalRetry(milliseconds: Int) -> [UInt8] {
        Array("retry: \(milliseconds)\n\n".utf8)
    }

    /// A comment that keeps proxies from closing the stream and finds clients that left.
    static let keepAlive = Array(": keep-alive\n\n".utf8)
}
