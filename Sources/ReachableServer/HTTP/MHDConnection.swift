import CMicroHTTPD

#if canImport(Glibc)
    import Glibc
#endif

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

    /// Peeks at the socket without waiting: 0 bytes is the client's FIN, an error other than
    /// "nothing yet" is a reset. Bytes the client sent after its request leave it connected.
    func clientHasLeft() -> Bool {
        let socket = reachd_mhd_connection_socket(connection)
        guard socket >= 0 else { return false }
        var byte: UInt8 = 0
        let received = recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if received == 0 { return true }
        return received < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR
    }
}
