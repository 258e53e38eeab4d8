import CProbeLibraries
import Glibc
import Reachable
import Testing

@testable import Probes

/// libcurl's failed connects in the contract's reasons: a router's "unreachable" is not a closed port.
struct CurlFailureTests {
    @Test(arguments: [EHOSTUNREACH, ENETUNREACH, EHOSTDOWN, ENONET, ENOPROTOOPT])
    func aDestinationUnreachableFromARouterIsHostUnreachable(socketErrno: Int32) {
        #expect(CurlFailure.reason(for: CURLE_COULDNT_CONNECT, socketErrno: socketErrno) == .hostUnreachable)
    }

    @Test(arguments: [ECONNREFUSED, 0])
    func aResetOrAnUnknownErrnoStaysRefused(socketErrno: Int32) {
        #expect(CurlFailure.reason(for: CURLE_COULDNT_CONNECT, socketErrno: socketErrno) == .refused)
    }

    @Test func theErrnoMattersOnlyForAFailedConnect() {
        #expect(CurlFailure.reason(for: CURLE_OPERATION_TIMEDOUT, socketErrno: EHOSTUNREACH) == .timeout)
        #expect(CurlFailure.reason(for: CURLE_PEER_FAILED_VERIFICATION, socketErrno: EHOSTUNREACH) == .tls)
    }
}
