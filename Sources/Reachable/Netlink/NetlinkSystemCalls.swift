import CMnl
import Glibc

/// Which of the source's two sockets a call is made on.
package enum NetlinkSocketRole: Sendable {
    /// Subscribed to notifications.
    case events
    /// Dumps and route lookups.
    case requests
}

/// The system calls the netlink source makes, as values: the real ones unless a test puts a
/// fault into one (a `recvmsg` that fails, a socket that cannot be reopened) to prove that the
/// monitor recovers, or says that it cannot. The seam sits exactly where the kernel does.
package struct NetlinkSystemCalls: Sendable {
    /// Opens a `NETLINK_ROUTE` socket (libmnl's handle), or `nil` with `errno` set.
    package var open: @Sendable (NetlinkSocketRole) -> OpaquePointer?
    /// One datagram into the buffer: its size, or -1 with `errno` set.
    package var receive: @Sendable (NetlinkSocketRole, OpaquePointer, UnsafeMutableRawBufferPointer) -> Int
    /// One request: bytes sent, or -1 with `errno` set.
    package var send: @Sendable (NetlinkSocketRole, OpaquePointer, UnsafeRawBufferPointer) -> Int

    package init(
        open: @escaping @Sendable (NetlinkSocketRole) -> OpaquePointer?,
        receive: @escaping @Sendable (NetlinkSocketRole, OpaquePointer, UnsafeMutableRawBufferPointer) -> Int,
        send: @escaping @Sendable (NetlinkSocketRole, OpaquePointer, UnsafeRawBufferPointer) -> Int
    ) {
        self.open = open
        self.receive = receive
        self.send = send
    }

    /// libmnl's own calls (its receive also drops datagrams that did not come from the kernel).
    package static let live = NetlinkSystemCalls(
        open: { _ in mnl_socket_open(NETLINK_ROUTE) },
        receive: { _, handle, buffer in mnl_socket_recvfrom(handle, buffer.baseAddress, buffer.count) },
        send: { _, handle, bytes in mnl_socket_sendto(handle, bytes.baseAddress, bytes.count) }
    )
}
