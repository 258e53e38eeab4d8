import Glibc
import Reachable
import Testing

@testable import Probes

/// One ICMP socket carries the replies of every `icmp://` target of its family and way out: it
/// asks for a receive buffer that holds a round of 1,000 replies (the default 208 KiB lost 6 %
/// of them in the fleet bench). The tests run as root, so the forced size is granted.
struct EchoSocketBufferTests {
    @Test(arguments: AddressFamily.allCases)
    func theReceiveBufferHoldsARoundOfReplies(family: AddressFamily) throws {
        let socket = try EchoSocket(family: family)
        var size: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        #expect(getsockopt(socket.descriptor, SOL_SOCKET, SO_RCVBUF, &size, &length) == 0)
        // The kernel doubles what was asked for its own bookkeeping.
        #expect(size >= EchoSocket.receiveBuffer, "\(size) bytes")
    }
}
