import CMicroHTTPD

/// A libmicrohttpd connection as an event stream sees it. One pointer wide, so passing it as
/// `any StreamConnection` allocates nothing.
///
/// Unchecked `Sendable`: `EventStream` calls it only under the rules of `StreamConnection`,
/// which are libmicrohttpd's (suspend inside the reader, resume once per suspension, never
/// after the request completed).
struct MHDConnection: StreamConnection, @unchecked Sendable {
    let connection: OpaquePointer

    func suspend() {
        MHD_suspend_connection(connection)
    }

    func resume() {
        MHD_resume_connection(connection)
    }
}
