import Reachable

/// The SSE wire text reachd writes. A status frame is encoded once per change and the same
/// bytes are shared by every subscriber (an array is copied by reference, not by value).
enum EventFrame {
    /// `id: 7\nevent: status\ndata: {…}\n\n`
    static func status(_ status: ReachabilityStatus, json: [UInt8]) -> [UInt8] {
        // One copy of the document (3.4 MB at 10,000 targets), not one per `+`.
        let head = "id: \(status.sequence)\nevent: status\ndata: ".utf8
        var frame: [UInt8] = []
        frame.reserveCapacity(head.count + json.count + 2)
        frame.append(contentsOf: head)
        frame.append(contentsOf: json)
        frame.append(contentsOf: "\n\n".utf8)
        return frame
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
