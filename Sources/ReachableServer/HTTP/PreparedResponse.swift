import CMicroHTTPD

/// The libmicrohttpd response of a `SharedResponse`, made once (on the first request for it)
/// and queued on every connection that asks for it: the `/status` document, re-made on each
/// change, is served from the shared response's own bytes — not copied per request, nor once
/// into libmicrohttpd (a fleet's document is megabytes).
///
/// libmicrohttpd counts references to a response: a connection that queued it keeps it alive
/// after this object lets go of its own reference in `deinit`, and the body's bytes with it
/// (`MHDResponse.makeSharing`).
///
/// Unchecked `Sendable`: the response pointer is immutable after `init`, and libmicrohttpd
/// takes the response's own mutex when it queues or releases it.
final class PreparedResponse: @unchecked Sendable {
    let response: OpaquePointer

    init(_ shared: SharedResponse) {
        response = MHDResponse.makeSharing(body: shared.body, headers: shared.headers)
    }

    deinit {
        MHD_destroy_response(response)
    }
}
