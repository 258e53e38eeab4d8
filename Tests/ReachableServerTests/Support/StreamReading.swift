@testable import ReachableServer

extension EventStream {
    /// One `read` into a buffer of `capacity` bytes, as text.
    func readText(capacity: Int = 4096) -> (text: String, result: Read) {
        var bytes = [UInt8](repeating: 0, count: capacity)
        let result = bytes.withUnsafeMutableBytes { read(into: $0) }
        guard case .wrote(let count) = result else { return ("", result) }
        return (String(decoding: bytes[0..<count], as: UTF8.self), result)
    }

    /// Reads until the stream suspends or ends; everything written, and how it stopped.
    func readAvailable(capacity: Int = 4096) -> (text: String, stop: Read) {
        var text = ""
        while true {
            let (chunk, result) = readText(capacity: capacity)
            guard case .wrote = result else { return (text, result) }
            text += chunk
        }
    }
}

extension HTTPResponse {
    /// The body's bytes, whatever kind of body it is (`nil` for a stream).
    var bodyBytes: [UInt8]? {
        switch body {
        case .bytes(let bytes): Array(bytes)
        case .shared(let shared): Array(shared.body)
        case .lengthUnknown: []
        case .stream, .later: nil
        }
    }

    var bodyText: String? { bodyBytes.map { String(decoding: $0, as: UTF8.self) } }

    var stream: EventStream? {
        if case .stream(let stream) = body { stream as? EventStream } else { nil }
    }

    func header(_ name: String) -> String? { headers.value(of: name) }
}
