import Foundation
import TestSupport

/// A CA, a server certificate it signed (for localhost and 127.0.0.1), a client certificate it
/// signed, and a key of no certificate: made by Debian's `openssl` in a directory of their own,
/// removed when the value goes.
final class TestCertificates: @unchecked Sendable {
    static let openssl = "/usr/bin/openssl"
    let directory: String

    init() throws {
        var template = Array("/tmp/reachd-tls-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw ChildProcess.SpawnError(description: "mkdtemp failed") }
        directory = String(cString: made)
        try run(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", file("ca.key")])
        try run([
            "req", "-x509", "-new", "-key", file("ca.key"), "-out", file("ca.crt"), "-days", "1", "-subj",
            "/CN=test CA",
        ])
        for name in ["server", "client"] {
            try run(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", file("\(name).key")])
            try run(["req", "-new", "-key", file("\(name).key"), "-out", file("\(name).csr"), "-subj", "/CN=\(name)"])
            try "subjectAltName=DNS:localhost,IP:127.0.0.1\n".write(
                toFile: file("\(name).ext"), atomically: true, encoding: .utf8)
            try run([
                "x509", "-req", "-in", file("\(name).csr"), "-CA", file("ca.crt"), "-CAkey", file("ca.key"),
                "-CAcreateserial", "-out", file("\(name).crt"), "-days", "1", "-extfile", file("\(name).ext"),
            ])
        }
        try run(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", file("other.key")])
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    func file(_ name: String) -> String { "\(directory)/\(name)" }

    /// Writes `text` to `name` in the directory; returns its path.
    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        try text.write(toFile: file(name), atomically: true, encoding: .utf8)
        return file(name)
    }

    private func run(_ arguments: [String]) throws {
        let process = try ChildProcess(Self.openssl, arguments, logPath: file("openssl.log"))
        guard process.waitForExit() == 0 else {
            throw ChildProcess.SpawnError(description: "openssl \(arguments[0]) failed: \(process.log)")
        }
    }
}
