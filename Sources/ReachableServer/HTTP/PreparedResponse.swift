import CMicroHTTPD

/// A libmicrohttpd response made once and queued on many connections: the `/status` document,
/// re-made on each change, is served without being encoded or copied per request.
///
/// libmicrohttpd counts references to a response: a connection that queued it keeps it alive
/// after this object lets go of its own reference in `deinit`.
///
/// Unchecked `Sendable`: the response pointer is immutable after `init`, and libmicrohttpd
/// takes the response's own mutex when it queues or releases it.
final class PreparedResponse: @unchecked Sendable {
    let headers: [HTTPField]
    let body: [UInt8]
    /// libmicrohttpd's `MHD_Response`, for `HTTP/` only.
    let response: OpaquePointer

    init(headers: [HTTPField], body: [UInt8]) {
        self.headers = headers
        self.body = body
        response = MHDResponse.make(body: body, headers: headers)
    }

    deinit {
        MHD_destroy_response(response)
    }
}
