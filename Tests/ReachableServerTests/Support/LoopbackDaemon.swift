@testable import ReachableServer

extension HTTPDaemon {
    /// A daemon listening on 127.0.0.1 at a port the kernel chose, not started yet.
    static func onLoopback() throws -> (daemon: HTTPDaemon, port: Int) {
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        let listening = try ListeningSocket(host: configuration.host, port: configuration.port)
        let port = listening.port
        return (HTTPDaemon(listening: listening, configuration: configuration), port)
    }
}
