import Reachable

/// An HTTP/1.1 response read from a stream of bytes: the status line and headers, then the body
/// by its length, in chunks, or to the end. Apart from the socket, so that what a running reachd
/// (or anything listening on its port) answers can be fed to it from anywhere — a fuzzer too.
package final class ResponseReader {
    /// The next bytes of the stream; empty at its end.
    package typealias Receive = () throws -> [UInt8]

    private let receive: Receive
    private var buffer: [UInt8] = []

    package init(receive: @escaping Receive) {
        self.receive = receive
    }

    /// More bytes into the buffer; false at end of stream.
    private func fill() throws -> Bool {
        let bytes = try receive()
        buffer += bytes
        return !bytes.isEmpty
    }

    package func readLine() throws -> String? {
        while true {
            if let end = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                var line = Array(buffer[..<end])
                buffer.removeSubrange(...end)
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                return String(decoding: line, as: UTF8.self)
            }
            guard try fill() else { return nil }
        }
    }

    package func read(exactly count: Int) throws -> [UInt8] {
        while buffer.count < count {
            guard try fill() else { throw LocalHTTPClient.Failure(description: "connection closed early") }
        }
        defer { buffer.removeFirst(count) }
        return Array(buffer.prefix(count))
    }

    package func readToEnd() throws -> [UInt8] {
        while try fill() {}
        defer { buffer = [] }
        return buffer
    }

    package func readHead() throws -> LocalHTTPClient.Head {
        guard let statusLine = try readLine() else { throw LocalHTTPClient.Failure(description: "no answer") }
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else {
            throw LocalHTTPClient.Failure(description: "not an HTTP answer: \(statusLine)")
        }
        var headers: [String: String] = [:]
        while let line = try readLine(), !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmed
        }
        return LocalHTTPClient.Head(status: status, headers: headers)
    }

    /// The next chunk of a chunked body; `nil` after the last one.
    package func readChunk() throws -> [UInt8]? {
        guard let sizeLine = try readLine(),
            let size = Self.number(sizeLine.split(separator: ";", omittingEmptySubsequences: false)[0], radix: 16)
        else { throw LocalHTTPClient.Failure(description: "bad chunk") }
        if size == 0 {
            _ = try readLine()
            return nil
        }
        let data = try read(exactly: size)
        _ = try readLine()
        return data
    }

    /// The body after `head`: chunked, of its `Content-Length`, or up to the end of the stream.
    package func readBody(after head: LocalHTTPClient.Head) throws -> [UInt8] {
        var body: [UInt8] = []
        if head.headers["transfer-encoding"]?.lowercased() == "chunked" {
            while let chunk = try readChunk() { body += chunk }
        } else if let text = head.headers["content-length"] {
            guard let length = Self.number(text[...], radix: 10) else {
                throw LocalHTTPClient.Failure(description: "bad Content-Length: \(text)")
            }
            body = try read(exactly: length)
        } else {
            body = try readToEnd()
        }
        return body
    }

    /// A chunk size (hex) or a `Content-Length` (decimal): digits only, spaces and tabs around
    /// them allowed. `Int(_:radix:)` alone would also take a sign, and a negative size is no size.
    private static func number(_ text: Substring, radix: Int) -> Int? {
        let digits = text.trimmed
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "-") })
        else { return nil }
        return Int(digits, radix: radix)
    }
}
