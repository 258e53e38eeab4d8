import ReachdClient
import Testing

/// HTTP answers as a running reachd (or whatever listens on its port) sends them, read in
/// pieces of every size, without a socket.
struct ResponseReaderTests {
    /// A reader over `bytes`, handed out `piece` bytes at a time.
    static func reader(_ text: String, piece: Int = 5) -> ResponseReader {
        var rest = Array(text.utf8)[...]
        return ResponseReader {
            defer { rest = rest.dropFirst(piece) }
            return Array(rest.prefix(piece))
        }
    }

    static func get(_ text: String, piece: Int = 5) throws -> (LocalHTTPClient.Head, [UInt8]) {
        let reader = reader(text, piece: piece)
        let head = try reader.readHead()
        return (head, try reader.readBody(after: head))
    }

    @Test(arguments: [1, 3, 1000])
    func aBodyOfItsContentLength(piece: Int) throws {
        let (head, body) = try Self.get(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4\r\n\r\n{}{}extra", piece: piece)
        #expect(head.status == 200)
        #expect(head.headers["content-type"] == "application/json")
        #expect(body == Array("{}{}".utf8))
    }

    @Test(arguments: [1, 4, 1000])
    func aChunkedBody(piece: Int) throws {
        let (head, body) = try Self.get(
            "HTTP/1.1 503 Service Unavailable\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\na;x=y\r\n0123456789\r\n0\r\n\r\n",
            piece: piece)
        #expect(head.status == 503)
        #expect(body == Array("abc0123456789".utf8))
    }

    @Test func aBodyToTheEndOfTheStream() throws {
        let (_, body) = try Self.get("HTTP/1.0 200 OK\nServer: x\n\nall of it")
        #expect(body == Array("all of it".utf8))
    }

    @Test func aStreamThatIsNoHTTPAnswerIsRefused() {
        #expect(throws: LocalHTTPClient.Failure.self) { try Self.reader("SSH-2.0-OpenSSH_9.2\r\n").readHead() }
        #expect(throws: LocalHTTPClient.Failure.self) { try Self.reader("").readHead() }
    }

    @Test func aBodyShorterThanItsLengthIsRefused() {
        #expect(throws: LocalHTTPClient.Failure.self) {
            try Self.get("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort")
        }
    }

    /// Found by FuzzClient (`Fuzz/Regressions/FuzzClient/negative-chunk-size`): a chunk size
    /// with a sign read as a negative count, and `read(exactly:)` trapped on it.
    @Test func aSignedChunkSizeIsRefused() throws {
        let reader = Self.reader("D 2\n\n-d\n", piece: 1)
        #expect(try reader.readHead().status == 2)
        #expect(throws: LocalHTTPClient.Failure.self) { try reader.readChunk() }
        #expect(throws: LocalHTTPClient.Failure.self) { try Self.reader("+5\r\nabcde\r\n").readChunk() }
    }

    @Test(arguments: ["-1", "+4", "4 4", "0x4", ""])
    func aContentLengthThatIsNoNumberIsRefused(length: String) {
        #expect(throws: LocalHTTPClient.Failure.self) {
            try Self.get("HTTP/1.1 200 OK\r\nContent-Length: \(length)\r\n\r\nbody")
        }
    }

    @Test func sizesMayHaveSpacesAndChunkExtensions() throws {
        let (_, body) = try Self.get(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4 ;name=value\r\nbody\r\n0\r\n\r\n")
        #expect(body == Array("body".utf8))
    }
}
