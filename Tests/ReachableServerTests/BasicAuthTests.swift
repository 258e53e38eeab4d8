import Foundation
import Testing

@testable import ReachableServer

/// Basic auth against bcrypt: right, wrong, missing and malformed credentials, and the cache.
struct BasicAuthTests {
    /// "secret" and "hunter2", cost 4 (fast for tests; the cost is the hash's own).
    static let users = [
        "prometheus": "$2b$04$wV4dIIBB7LbVUOBGXIIunehcyeGJFOJ/47E84NAoNl9iNqnmZY6kq",
        "alice": "$2b$04$4FuUOXMbTFg7/2bjeC/XD.ewcu..cC317K2SybRQfjz9/NToCC386",
    ]

    static func header(_ credentials: String, scheme: String = "Basic") -> String {
        "\(scheme) \(Data(credentials.utf8).base64EncodedString())"
    }

    @Test func rightCredentialsPass() throws {
        let auth = try #require(BasicAuth(users: Self.users))
        #expect(auth.allows(Self.header("prometheus:secret")))
        #expect(auth.allows(Self.header("alice:hunter2")))
        #expect(auth.allows(Self.header("alice:hunter2", scheme: "basic")))
    }

    @Test(arguments: [
        "prometheus:wrong", "prometheus:", "alice:secret", "nobody:secret", "prometheus:secret\u{0}", ":secret",
    ])
    func wrongCredentialsFail(credentials: String) throws {
        let auth = try #require(BasicAuth(users: Self.users))
        #expect(!auth.allows(Self.header(credentials)))
    }

    @Test(arguments: [
        nil, "", "Basic", "Basic !!!not-base64", "Bearer cHJvbWV0aGV1czpzZWNyZXQ=", "Basic cHJvbWV0aGV1cw==",
        "Digest username=prometheus",
    ])
    func missingOrMalformedHeadersFail(header: String?) throws {
        let auth = try #require(BasicAuth(users: Self.users))
        #expect(!auth.allows(header))
    }

    @Test func noUsersIsNoBasicAuth() {
        #expect(BasicAuth(users: [:]) == nil)
    }

    /// Both outcomes are remembered: the second check of a header, right or wrong, costs a hash
    /// and a lookup, far less than bcrypt at cost 10 (about 50 ms). A first try pays bcrypt, right
    /// or wrong, known user or not: timing tells nothing.
    @Test func bothOutcomesAreCached() throws {
        // "rasmuslerdorf" at cost 10.
        let hash = "$2b$10$" + "uksSK9gqmkdf2NFzjFhdtesWzKt22l0XGzU3XGuqVO6VpLGOyPmaC"
        let auth = try #require(BasicAuth(users: ["bob": hash]))
        let clock = ContinuousClock()
        let wrong = Self.header("bob:nope")
        let right = Self.header("bob:rasmuslerdorf")
        let firstWrong = clock.measure { #expect(!auth.allows(wrong)) }
        let firstRight = clock.measure { #expect(auth.allows(right)) }
        let unknown = clock.measure { #expect(!auth.allows(Self.header("mallory:nope"))) }
        // The fastest of five: a stalled machine can make one check slow, not five.
        let cachedWrong = (0..<5).map { _ in clock.measure { #expect(!auth.allows(wrong)) } }.min()!
        let cachedRight = (0..<5).map { _ in clock.measure { #expect(auth.allows(right)) } }.min()!
        #expect(firstWrong > .milliseconds(5))
        #expect(firstRight > .milliseconds(5))
        #expect(unknown > .milliseconds(5))
        #expect(cachedWrong < .milliseconds(5))
        #expect(cachedRight < .milliseconds(5))
    }

    /// A flood of new wrong passwords fills the failures' cache, never the successes': the good
    /// header stays cached.
    @Test func wrongPasswordsNeverEvictAGoodHeader() throws {
        let auth = try #require(BasicAuth(users: Self.users))
        let right = Self.header("prometheus:secret")
        #expect(auth.allows(right))
        let verifier = PasswordVerifier()
        defer { verifier.stop() }
        // Verified on this thread (cost 4: about a millisecond each), as the verifier's would.
        for index in 0..<(BasicAuth.refusedLimit + 10) {
            #expect(!auth.allows(Self.header("prometheus:guess\(index)")))
        }
        guard case .allowed = auth.check(right, verifier: verifier) else {
            Issue.record("the good header was verified again")
            return
        }
    }

    @Test func cachedHeadersAreFastAndBounded() throws {
        let auth = try #require(BasicAuth(users: Self.users))
        let header = Self.header("prometheus:secret")
        #expect(auth.allows(header))
        let clock = ContinuousClock()
        // The fastest of three rounds: a stalled machine can slow one round, not three.
        let cached = (0..<3).map { _ in clock.measure { for _ in 0..<1000 { #expect(auth.allows(header)) } } }.min()!
        // 1,000 cached checks take less than a few bcrypt verifications at cost 4 (~1 ms each).
        #expect(cached < .milliseconds(200))
        // Many distinct good headers (same user, scheme spelled differently) push the first out:
        // it is verified again, still right.
        for index in 0..<(BasicAuth.allowedLimit + 5) {
            let spaced = "Basic" + String(repeating: " ", count: index + 2) + header.dropFirst(6)
            #expect(auth.allows(spaced))
        }
        #expect(auth.allows(header))
    }

    @Test func constantTimeEqualityComparesEveryByte() {
        #expect(ConstantTime.equal(Array("abc".utf8), Array("abc".utf8)))
        #expect(!ConstantTime.equal(Array("abc".utf8), Array("abd".utf8)))
        #expect(!ConstantTime.equal(Array("abc".utf8), Array("ab".utf8)))
    }

    @Test func aHashLibxcryptRefusesNeverMatches() {
        #expect(!BcryptHash.verify(Array("secret".utf8), against: "$2b$04$short"))
    }
}
