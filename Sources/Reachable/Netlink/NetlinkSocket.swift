import CMnl
import Glibc

/// One `NETLINK_ROUTE` socket, opened, bound and closed through libmnl.
///
/// Owned by exactly one thread at a time (the source's), hence a plain class.
final class NetlinkSocket {
    private let handle: OpaquePointer
    let descriptor: Int32
    let portID: UInt32

    /// - Parameters:
    ///   - groups: `RTNLGRP_*` multicast groups to join (empty for a request-only socket).
    ///   - receiveBufferSize: bytes to ask for; events are lost (`ENOBUFS`) when it fills.
    init(groups: [UInt32], nonBlocking: Bool, receiveBufferSize: Int? = nil) throws {
        guard let handle = mnl_socket_open(NETLINK_ROUTE) else { throw NetlinkError("mnl_socket_open") }
        self.handle = handle
        descriptor = mnl_socket_get_fd(handle)
        do {
            if nonBlocking {
                let flags = fcntl(descriptor, F_GETFL)
                guard fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) == 0 else { throw NetlinkError("fcntl") }
            }
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            if let receiveBufferSize {
                var size = Int32(clamping: receiveBufferSize)
                let length = socklen_t(MemoryLayout<Int32>.size)
                // FORCE passes net.core.rmem_max when we hold CAP_NET_ADMIN; otherwise ask politely.
                if setsockopt(descriptor, SOL_SOCKET, SO_RCVBUFFORCE, &size, length) != 0 {
                    _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, length)
                }
            }
            let mask = groups.reduce(UInt32(0)) { $0 | (1 << ($1 - 1)) }
            guard mnl_socket_bind(handle, mask, pid_t(MNL_SOCKET_AUTOPID)) == 0 else {
                throw NetlinkError("mnl_socket_bind")
            }
            portID = mnl_socket_get_portid(handle)
        } catch {
            mnl_socket_close(handle)
            throw error
        }
    }

    deinit {
        mnl_socket_close(handle)
    }

    func send(_ message: [UInt8]) throws {
        while true {
            let sent = message.withUnsafeBytes { mnl_socket_sendto(handle, $0.baseAddress, $0.count) }
            if sent >= 0 { return }
            if errno != EINTR { throw NetlinkError("sendto") }
        }
    }

    /// One datagram into `buffer`; `nil` when a non-blocking socket has nothing more.
    func receive(into buffer: UnsafeMutableRawBufferPointer) throws -> Int? {
        while true {
            let count = mnl_socket_recvfrom(handle, buffer.baseAddress, buffer.count)
            if count >= 0 { return count }
            switch errno {
            case EINTR: continue
            case EAGAIN: return nil
            default: throw NetlinkError("recvfrom")
            }
        }
    }
}
