import CMicroHTTPD
import Glibc
import Reachable

/// A libmicrohttpd connection as an event stream sees it. Two words wide, so passing it as
/// `any StreamConnection` allocates nothing.
///
/// Unchecked `Sendable`: `EventStream` calls it only under the rules of `StreamConnection`,
/// which are libmicrohttpd's (suspend inside the reader, resume once per suspension, never
/// after the request completed, write directly only while suspended). The client's socket is
/// libmicrohttpd's: used here, never owned (no `OwnedDescriptor`), and closed by it.
struct MHDConnection: StreamConnection, @unchecked Sendable {
    let connection: OpaquePointer
    /// The client's socket when the response is chunked (HTTP/1.1) and may be written directly;
    /// -1 otherwise (an HTTP/1.0 stream's body is unframed, and rare: it always goes through
    /// libmicrohttpd; a TLS stream's bytes are records only GnuTLS can write).
    private let directSocket: Int32

    init(connection: OpaquePointer, httpVersion: String, isTLS: Bool = false) {
        self.connection = connection
        directSocket = httpVersion == "HTTP/1.0" || isTLS ? -1 : reachd_mhd_connection_socket(connection)
    }

    func suspend() {
        MHD_suspend_connection(connection)
    }

    func resume() {
        MHD_resume_connection(connection)
    }

    /// Sends `bytes` as one chunk (`size CRLF bytes CRLF`, as libmicrohttpd frames its own) with
    /// one `sendmsg`, the frame itself shared with every other stream (no copy per client).
    ///
    /// A suspended connection's write buffer is empty (libmicrohttpd suspends it from the reader,
    /// once the previous chunk was sent), so these bytes follow whole chunks. Only a socket with
    /// nothing left unacknowledged (`SIOCOUTQ` 0) is written, and only a chunk no larger than the
    /// send buffer (the kernel allows twice what was asked): an empty send buffer takes it whole,
    /// and a partial write would leave raw bytes libmicrohttpd cannot continue. A client that
    /// reads slowly has data outstanding, and a document larger than the buffer can grow to does
    /// not fit: both take libmicrohttpd's path, which writes as the socket drains.
    func writeNow(_ bytes: [UInt8]) -> DirectWrite {
        var header = ChunkHeader(size: bytes.count)
        let total = header.count + bytes.count + 2
        guard directSocket >= 0, !bytes.isEmpty else { return .notNow }
        if total > ListeningSocket.sendBufferBytes {
            guard total <= growSendBuffer(toHold: total) else { return .notNow }
        }
        let unsent: Int32
        do throws(SystemError) {
            unsent = try systemCall("ioctl SIOCOUTQ") { reachd_socket_unsent_bytes(directSocket) }
        } catch {
            return .failed
        }
        guard unsent == 0 else { return .notNow }
        var lineEnd = (UInt8(ascii: "\r"), UInt8(ascii: "\n"))
        let sent = header.withBytes { headerBytes in
            withUnsafeBytes(of: &lineEnd) { lineEndBytes in
                bytes.withUnsafeBytes { body in
                    withUnsafeTemporaryAllocation(of: iovec.self, capacity: 3) { vectors in
                        vectors[0] = iovec(
                            iov_base: UnsafeMutableRawPointer(mutating: headerBytes.baseAddress),
                            iov_len: headerBytes.count)
                        vectors[1] = iovec(
                            iov_base: UnsafeMutableRawPointer(mutating: body.baseAddress), iov_len: body.count)
                        vectors[2] = iovec(
                            iov_base: UnsafeMutableRawPointer(mutating: lineEndBytes.baseAddress), iov_len: 2)
                        var message = msghdr()
                        message.msg_iov = vectors.baseAddress
                        message.msg_iovlen = 3
                        do throws(SystemError) {
                            return try systemCall("sendmsg") {
                                sendmsg(directSocket, &message, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
                            }
                        } catch {
                            return -Int(error.code)
                        }
                    }
                }
            }
        }
        if sent == total { return .written }
        if sent == -Int(EAGAIN) || sent == -Int(EWOULDBLOCK) { return .notNow }
        return .failed
    }

    /// Raises the send buffer to hold a frame larger than the one every connection starts with
    /// (`ListeningSocket.sendBufferBytes`), as far as the kernel lets a process (`net.core.wmem_max`,
    /// 208 KiB by default); returns what it now takes at once. A fleet's document through the
    /// starting buffer is many round trips of fill, wake and drain on the way from a link-down to
    /// its event (docs/scale.md). A stalled client then holds up to one such buffer in the kernel,
    /// as reachd holds one pending frame for it — not a backlog of events.
    private func growSendBuffer(toHold total: Int) -> Int {
        var size = Int32(clamping: min(total, Self.largestSendBuffer))
        var granted: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard setsockopt(directSocket, SOL_SOCKET, SO_SNDBUF, &size, length) == 0,
            getsockopt(directSocket, SOL_SOCKET, SO_SNDBUF, &granted, &length) == 0
        else { return ListeningSocket.sendBufferBytes }
        // The kernel reports twice what it granted (half is its bookkeeping).
        return Int(granted) / 2
    }

    /// What a connection's send buffer is ever asked to grow to (the kernel caps it lower).
    private static let largestSendBuffer = 4 * 1024 * 1024

    /// Peeks at the socket without waiting: 0 bytes is the client's FIN, an error other than
    /// "nothing yet" is a reset. Bytes the client sent after its request leave it connected.
    func clientHasLeft() -> Bool {
        let socket = reachd_mhd_connection_socket(connection)
        guard socket >= 0 else { return false }
        var byte: UInt8 = 0
        do throws(SystemError) {
            return try systemCall("recv MSG_PEEK") { recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) } == 0
        } catch {
            return error.code != EAGAIN && error.code != EWOULDBLOCK
        }
    }
}

/// A chunk's size line, `1a2b\r\n`, built on the stack (no allocation per client).
private struct ChunkHeader {
    private var storage: (UInt64, UInt64) = (0, 0)
    private(set) var count = 0

    init(size: Int) {
        var digits = 1
        while digits < 15, size >> (4 * digits) != 0 { digits += 1 }
        count = digits + 2
        withUnsafeMutableBytes(of: &storage) { raw in
            for index in 0..<digits {
                let nibble = (size >> (4 * (digits - 1 - index))) & 0xF
                raw[index] = UInt8(nibble < 10 ? 48 + nibble : 87 + nibble)  // 0-9, a-f
            }
            raw[digits] = UInt8(ascii: "\r")
            raw[digits + 1] = UInt8(ascii: "\n")
        }
    }

    mutating func withBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        let count = self.count
        return withUnsafeBytes(of: &storage) { body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
    }
}
