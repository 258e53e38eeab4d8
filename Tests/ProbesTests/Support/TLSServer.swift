import Foundation
import TestSupport

/// A TLS server with a certificate nobody trusts: Debian's `openssl s_server` on loopback, with a
/// self-signed key and certificate made by `openssl req` for this test.
final class SelfSignedTLSServer: @unchecked Sendable {
    static let openssl = "/usr/bin/openssl"
    let port: UInt16
    /// The certificate, for a client that should trust it (`ProbeEngine(trustedCertificates:)`).
    let certificatePath: String
    private let process: ChildProcess

    init(directory: TemporaryDirectory) throws {
        let key = directory.file("key.pem")
        let certificate = directory.file("cert.pem")
        certificatePath = certificate
        let request = try ChildProcess(
            Self.openssl,
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", key, "-out", certificate, "-days", "1", "-subj", "/CN=localhost",
                "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
            ], logPath: directory.file("openssl-req.log"))
        guard request.waitForExit() == 0 else {
            throw ChildProcess.SpawnError(description: "openssl req failed: \(request.log)")
        }
        for _ in 0..<5 {
            let port = try LoopbackSocket.freePort(on: ["127.0.0.1"])
            let server = try ChildProcess(
                Self.openssl,
                ["s_server", "-accept", "127.0.0.1:\(port)", "-cert", certificate, "-key", key, "-www", "-quiet"],
                logPath: directory.file("s_server.log"))
            let deadline = ContinuousClock.now + .seconds(30)
            while !server.hasExited, ContinuousClock.now < deadline {
                if LoopbackSocket.canConnect(address: "127.0.0.1", port: port) {
                    self.port = port
                    process = server
                    return
                }
                usleep(20_000)
            }
            server.terminate()  // the port was taken meanwhile, or it is slow: try another
        }
        throw ChildProcess.SpawnError(description: "openssl s_server did not start")
    }

    deinit {
        process.terminate()
    }
}
