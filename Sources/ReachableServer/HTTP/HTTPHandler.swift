import CMicroHTTPD

/// What the daemon calls for every request, on libmicrohttpd's threads.
protocol HTTPHandler: AnyObject, Sendable {
    /// Seconds an idle connection stays open between requests.
    var connectionTimeout: UInt32 { get }

    /// Queue a response for this request. `context` is the request's slot: whatever is stored
    /// there comes back in `completed`.
    func respond(
        to request: HTTPRequest, on connection: OpaquePointer,
        context: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result

    /// The request ended (answered, or the client left); `context` is what `respond` stored.
    func completed(context: UnsafeMutableRawPointer)
}

/// The request line as libmicrohttpd parsed it (the path without its query string).
struct HTTPRequest: Sendable, Equatable {
    var method: String
    var path: String
    var version: String
}
