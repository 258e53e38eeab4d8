import Reachable
import Testing

/// The one split of `HOST[:PORT]` / `[IPv6][:PORT]`, shared by target URLs and the `Host` header.
struct AuthorityBoundsTests {
    private static func parts(_ text: String) -> (host: String, bracketed: Bool, port: String?)? {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { buffer in
            AuthorityBounds(buffer, from: 0, to: buffer.count).map { bounds in
                (
                    String(decoding: bytes[bounds.host], as: UTF8.self), bounds.isBracketed,
                    bounds.port.map { String(decoding: bytes[$0], as: UTF8.self) }
                )
            }
        }
    }

    @Test(
        arguments: [
            ("db.test", "db.test", false, nil), ("db.test:5432", "db.test", false, "5432"), ("db:", "db", false, ""),
            ("[::1]", "::1", true, nil), ("[2001:db8::1]:443", "2001:db8::1", true, "443"), ("[::1]:", "::1", true, ""),
            ("", "", false, nil), (":80", "", false, "80"), ("[]", "", true, nil), ("a:x", "a", false, "x"),
        ] as [(String, String, Bool, String?)])
    func splitsHostAndPort(text: String, host: String, bracketed: Bool, port: String?) throws {
        let parts = try #require(Self.parts(text))
        #expect(parts.host == host && parts.bracketed == bracketed && parts.port == port, "\(parts)")
    }

    /// An IPv6 literal without brackets, a bracket left open, something after the `]`.
    @Test(arguments: ["::1", "2001:db8::1:80", "a:1:2", "[::1", "[::1]80", "[::1]x:80", "["])
    func refusesWhatIsNoAuthority(text: String) {
        #expect(Self.parts(text) == nil)
    }

    @Test func readsOnlyTheRangeItIsGiven() throws {
        let bytes = Array(" [::1]:8 ".utf8)
        let bounds = try #require(bytes.withUnsafeBufferPointer { AuthorityBounds($0, from: 1, to: 8) })
        #expect(bounds.host == 2..<5 && bounds.isBracketed && bounds.port == 7..<8)
    }
}
