import Testing

@testable import ReachableServer

/// The hashes `reachd hash-password` prints: bcrypt `$2y$` at the cost asked, a new salt each
/// time, and accepted by the verification basic auth uses.
struct BcryptHashMakingTests {
    @Test func aHashAtTheDefaultCostVerifies() throws {
        let hash = try #require(BcryptHashMaking.hash(Array("hunter2".utf8), cost: BcryptHashMaking.defaultCost))
        #expect(hash.hasPrefix("$2y$10$") && BcryptHash.isWellFormed(hash))
        #expect(BcryptHash.verify(Array("hunter2".utf8), against: hash))
        #expect(!BcryptHash.verify(Array("hunter3".utf8), against: hash))
    }

    @Test func theCostIsTheOneAsked() throws {
        let hash = try #require(BcryptHashMaking.hash(Array("x".utf8), cost: 11))
        #expect(hash.hasPrefix("$2y$11$"))
    }

    /// The salt comes from the system each time: the same password never gives the same hash.
    @Test func everyHashHasItsOwnSalt() throws {
        let first = try #require(BcryptHashMaking.hash(Array("hunter2".utf8), cost: 10))
        let second = try #require(BcryptHashMaking.hash(Array("hunter2".utf8), cost: 10))
        #expect(first != second)
    }

    /// 72 bytes, the most bcrypt reads, hash and verify whole.
    @Test func seventyTwoBytesVerify() throws {
        let password = Array(repeating: UInt8(ascii: "p"), count: 72)
        let hash = try #require(BcryptHashMaking.hash(password, cost: 10))
        #expect(BcryptHash.verify(password, against: hash))
    }
}
