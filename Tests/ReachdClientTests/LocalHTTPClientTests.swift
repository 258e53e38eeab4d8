import ReachdClient
import Testing

/// Where the client commands connect and what `Host` they send.
struct LocalHTTPClientTests {
    @Test func localhostIsBothLoopbackAddressesIPv4First() {
        let client = LocalHTTPClient(host: "localhost", port: 9478, userAgent: "test")
        #expect(client.addresses == ["127.0.0.1", "::1"])
        #expect(client.hostHeader == "localhost:9478")
    }

    @Test func anIPv6LiteralGoesInBracketsInHost() {
        let client = LocalHTTPClient(host: "::1", port: 9478, userAgent: "test")
        #expect(client.addresses == ["::1"])
        #expect(client.hostHeader == "[::1]:9478")
    }

    /// A name or a port out of range is refused before any socket is made, and says which.
    @Test(arguments: [
        ("db.test", 9478, "db.test is not an IP address"), ("127.0.0.1", 70000, "port 70000 is not in 0...65535"),
    ])
    func anAddressOrPortThatIsNoneIsRefusedBeforeAnySocket(host: String, port: Int, says: String) {
        let client = LocalHTTPClient(host: host, port: port, userAgent: "test")
        let error = #expect(throws: LocalHTTPClient.Failure.self) { try client.get("/livez") }
        #expect(error?.description.contains(says) == true, "\(String(describing: error))")
    }

    /// Nothing listens on a port just freed: the failure names the address and the kernel's reason.
    @Test func aRefusedConnectionSaysSo() throws {
        let client = LocalHTTPClient(host: "127.0.0.1", port: 9, userAgent: "test")
        let error = #expect(throws: LocalHTTPClient.Failure.self) { try client.get("/livez") }
        #expect(error?.description.contains("cannot connect to 127.0.0.1:9") == true)
        #expect(error?.description.contains("Connection refused") == true)
    }
}
