import Glibc
import Reachable

/// A plain connection's reads, noting what a TLS port does to a plain request: GnuTLS closes
/// the connection without a byte (or with a reset: the request was left unread), or sends an
/// alert. Either is told as "add --tls" rather than as "no answer".
package final class PlainReception {
    private let socket: Int32
    /// The first bytes received, at most a TLS record header's first two.
    private var firstBytes: [UInt8] = []
    /// The peer closed (end of stream, or a reset).
    private var closedByPeer = false

    init(socket: Int32) {
        self.socket = socket
    }

    /// The next bytes from the socket; empty at end of stream.
    func receive() throws(LocalHTTPClient.Failure) -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        do {
            let count = try systemCall("recv") { recv(socket, &chunk, chunk.count, 0) }
            if count == 0 { closedByPeer = true }
            if firstBytes.count < 2 { firstBytes += chunk[0..<min(count, 2 - firstBytes.count)] }
            return Array(chunk[0..<count])
        } catch {
            if error.code == ECONNRESET { closedByPeer = true }
            throw LocalHTTPClient.Failure(description: error.code == EAGAIN ? "timed out" : "read failed: \(error)")
        }
    }

    /// When the head could not be read: whether that was a TLS port's refusal.
    func tlsRefusal(at address: String) -> LocalHTTPClient.Failure? {
        Self.tlsRefusal(at: address, firstBytes: firstBytes, closedByPeer: closedByPeer)
    }

    /// A TLS record begins with its content type — 21 an alert, 22 a handshake — and the
    /// major version 3; an HTTP answer begins with `H`.
    package static func tlsRefusal(
        at address: String, firstBytes: [UInt8], closedByPeer: Bool
    ) -> LocalHTTPClient.Failure? {
        if firstBytes.count == 2, firstBytes[1] == 3, firstBytes[0] == 21 || firstBytes[0] == 22 {
            return .speaksTLS(address, "answered with a TLS \(firstBytes[0] == 21 ? "alert" : "handshake")")
        }
        if firstBytes.isEmpty, closedByPeer {
            return .speaksTLS(address, "closed the connection without an answer")
        }
        return nil
    }
}
