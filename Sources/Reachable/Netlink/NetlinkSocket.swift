import CMnl
import Glibc

/// One `NETLINK_ROUTE` socket, opened, bound and closed through libmnl; it owns the descriptor.
///
/// Owned by exactly one thread at a time (the source's), hence a plain class.
final class NetlinkSocket {
    private let handle: OpaquePointer
    private let role: NetlinkSocketRole
    private let calls: NetlinkSystemCalls
    let descriptor: Int32

    /// - Parameters:
    ///   - groups: `RTNLGRP_*` multicast groups to join (empty for a request-only socket).
    ///   - receiveBufferSize: bytes to ask for; events are lost (`ENOBUFS`) when it fills.
    init(
        role: NetlinkSocketRole, groups: [UInt32], nonBlocking: Bool, receiveBufferSize: Int? = nil,
        calls: NetlinkSystemCalls
    ) throws(SystemError) {
        guard let handle = calls.open(role) else { throw SystemError("mnl_socket_open") }
        self.handle = handle
        self.role = role
        self.calls = calls
        descriptor = mnl_socket_get_fd(handle)
        do {
            if nonBlocking {
                let flags = try systemCall("fcntl") { fcntl(descriptor, F_GETFL) }
                try systemCall("fcntl") { fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) }
            }
            try systemCall("fcntl") { fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
            if let receiveBufferSize {
                var size = Int32(clamping: receiveBufferSize)
                let length = socklen_t(MemoryLayout<Int32>.size)
                // FORCE passes net.core.rmem_max when we hold CAP_NET_ADMIN; otherwise ask politely.
                if setsockopt(descriptor, SOL_SOCKET, SO_RCVBUFFORCE, &size, length) != 0 {
                    _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, length)
                }
            }
            let mask = groups.reduce(UInt32(0)) { $0 | (1 << ($1 - 1)) }
            try systemCall("mnl_socket_bind") { mnl_socket_bind(handle, mask, pid_t(MNL_SOCKET_AUTOPID)) }
        } catch {
            mnl_socket_close(handle)
            throw error
        }
    }

    deinit {
        mnl_socket_close(handle)
    }

    /// Gives up waiting for an answer after `seconds`: a stuck kernel must not hang the thread.
    func setReceiveTimeout(seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Asks the kernel to check requests strictly and to honour the filters in dump requests
    /// (`NETLINK_GET_STRICT_CHK`, Linux 4.20). Returns whether it agreed.
    func enableStrictChecking() -> Bool {
        var one: Int32 = 1
        return setsockopt(descriptor, Self.solNetlink, Self.strictCheck, &one, socklen_t(MemoryLayout<Int32>.size)) == 0
    }

    private static let solNetlink: Int32 = 270  // SOL_NETLINK
    private static let strictCheck: Int32 = 12  // NETLINK_GET_STRICT_CHK

    func send(_ message: [UInt8]) throws(SystemError) {
        let sent = message.withUnsafeBytes { bytes in
            Result { () throws(SystemError) in
                try systemCall("sendto") { calls.send(role, handle, bytes) }
            }
        }
        _ = try sent.get()
    }

    /// One datagram into `buffer`; `nil` when a non-blocking socket has nothing more.
    func receive(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int? {
        do {
            return try systemCall("recvfrom") { calls.receive(role, handle, buffer) }
        } catch  where error.code == EAGAIN {
            return nil
        }
    }
}
