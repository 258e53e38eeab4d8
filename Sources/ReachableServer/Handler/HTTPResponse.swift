/// What a route answers: a status, headers and a body. Plain Swift; `HTTP/` turns it into
/// libmicrohttpd's response.
struct HTTPResponse: Sendable {
    enum Body: Sendable {
        /// Bytes for this one response.
        case bytes([UInt8])
        /// A response made once and served to every request that asks for it (the `/status`
        /// document), so a request neither encodes nor copies it. Its headers are part of it.
        case prepared(PreparedResponse)
        /// A Server-Sent Events stream, read by the engine for as long as the connection lives.
        case stream(EventStream)
    }

    let status: Int
    let headers: [HTTPField]
    let body: Body

    init(status: Int, headers: [HTTPField], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = .bytes(body)
    }

    init(status: Int, headers: [HTTPField], stream: EventStream) {
        self.status = status
        self.headers = headers
        self.body = .stream(stream)
    }

    /// The headers are the prepared response's own: they were attached when it was made.
    init(status: Int, prepared: PreparedResponse) {
        self.status = status
        self.headers = prepared.headers
        self.body = .prepared(prepared)
    }
}
