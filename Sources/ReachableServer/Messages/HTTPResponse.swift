/// What a route answers: a status, headers and a body. Plain Swift; `HTTP/` turns it into
/// libmicrohttpd's response.
struct HTTPResponse: Sendable {
    enum Body: Sendable {
        /// Bytes for this one response (a slice: the `/status` document is one of its frame).
        case bytes(ArraySlice<UInt8>)
        /// Bytes made once and served to every request that asks for them; the daemon prepares
        /// its response from them once. Its headers are part of it.
        case shared(SharedResponse)
        /// A body read by the daemon for as long as the connection lives (Server-Sent Events).
        case stream(any BodyStream)
        /// The headers of a body whose length is not known, without the body: what `HEAD` of a
        /// stream answers (no `Content-Length`, RFC 9110 §9.3.2).
        case lengthUnknown
        /// No answer yet: the connection waits, parked, until this one is ready.
        case later(any DeferredAnswer)
    }

    let status: Int
    let headers: [HTTPField]
    let body: Body

    init(status: Int, headers: [HTTPField], body: [UInt8]) {
        self.init(status: status, headers: headers, body: body[...])
    }

    init(status: Int, headers: [HTTPField], body: ArraySlice<UInt8>) {
        self.status = status
        self.headers = headers
        self.body = .bytes(body)
    }

    init(status: Int, headers: [HTTPField], stream: any BodyStream) {
        self.status = status
        self.headers = headers
        self.body = .stream(stream)
    }

    /// Headers only, for a body of unknown length (`HEAD /events`).
    init(status: Int, headers: [HTTPField], lengthUnknown: Void) {
        self.status = status
        self.headers = headers
        self.body = .lengthUnknown
    }

    /// The answer comes later (`status` and `headers` are the deferred answer's).
    init(later: any DeferredAnswer) {
        self.status = 0
        self.headers = []
        self.body = .later(later)
    }

    /// The headers are the shared response's own: they were attached when it was made.
    init(status: Int, shared: SharedResponse) {
        self.status = status
        self.headers = shared.headers
        self.body = .shared(shared)
    }
}
