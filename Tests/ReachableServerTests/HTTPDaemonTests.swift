import Glibc
import Testing

@testable import ReachableServer

/// Who closes the listening socket: libmicrohttpd while it owns it, reachd once quiescing hands
/// it back, never both. A descriptor number can be reused by another test at once, so "closed"
/// means the number no longer refers to the same socket (its inode changed or it is gone).
@Suite(.serialized)
struct HTTPDaemonTests {
    /// Answers nothing useful: these tests never send a request.
    struct Unused: HTTPHandler {
        func respond(to request: HTTPRequest, on connection: any StreamConnection) -> HTTPResponse {
            Problem.notFound.response
        }
        func streamEnded(_ stream: EventStream) {}
    }

    private func makeDaemon() throws -> (HTTPDaemon, descriptor: Int32, inode: UInt) {
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        let listening = try ListeningSocket(host: configuration.host, port: configuration.port)
        let inode = try #require(Self.inode(of: listening.descriptor))
        return (HTTPDaemon(listening: listening, configuration: configuration), listening.descriptor, inode)
    }

    private static func inode(of descriptor: Int32) -> UInt? {
        var info = stat()
        return fstat(descriptor, &info) == 0 ? UInt(info.st_ino) : nil
    }

    @Test func aDaemonNeverStartedClosesItsSocketWhenStopped() throws {
        let (daemon, descriptor, inode) = try makeDaemon()
        daemon.stop()
        #expect(Self.inode(of: descriptor) != inode)
    }

    @Test func aQuiescedDaemonHandsTheSocketBackAndReachdClosesIt() throws {
        let (daemon, descriptor, inode) = try makeDaemon()
        try daemon.start(handler: Unused())
        daemon.quiesce()
        #expect(Self.inode(of: descriptor) == inode, "open until the stop, refusing connections")
        daemon.stop()
        #expect(Self.inode(of: descriptor) != inode)
    }

    @Test func aDaemonStoppedWhileRunningLeavesTheSocketToLibmicrohttpd() throws {
        let (daemon, descriptor, inode) = try makeDaemon()
        try daemon.start(handler: Unused())
        daemon.stop()
        #expect(Self.inode(of: descriptor) != inode)
        daemon.stop()
    }
}
