import CMicroHTTPD

/// The libmicrohttpd response of a `SharedResponse`, made once (on the first request for it)
/// and queued on every connection that asks for it: the `/status` document, re-made on each
/// change, is served without being copied per request.
///
/// libmicrohttpd counts references to a response: a connection that queued it keeps it alive
/// after this object lets go of its own reference in `deinit`.
///
/// Unchecked `Sendable`: the response pointer is immutable after `init`, and libmicrohttpd
/// takes the response's own mutex when it queues or releases it.
final class PreparedResponse: @unchecked Sendable {
    let response: OpaquePointer

    init(_ shared: SharedResponse) {
        response = MHDResponse.make(body: shared.body, headers: shared.headers)
    }

    deinit {
        MHD_destroy_response(response)
    }
}
