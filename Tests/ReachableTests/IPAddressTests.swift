import Glibc
import Reachable
import Testing

/// The one address type: text in and out (strict, canonical), order, and the `sockaddr` that
/// `bind`, `connect` and `sendto` take and getaddrinfo and c-ares give back.
struct IPAddressTests {
    @Test(arguments: ["198.18.0.1", "2001:db8::1", "::1", "0.0.0.0"])
    func aSocketAddressCarriesTheAddressAndPortAndComesBack(text: String) throws {
        let address = try #require(IPAddress(text))
        let (family, port, length, back) = address.withSocketAddress(port: 8080) { socketAddress, length in
            let port = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                UInt16(bigEndian: $0.pointee.sin_port)  // sin_port and sin6_port share their offset
            }
            return (Int32(socketAddress.pointee.sa_family), port, length, IPAddress(socketAddress: socketAddress))
        }
        #expect(family == (address.isIPv6 ? AF_INET6 : AF_INET))
        #expect(port == 8080)
        #expect(Int(length) == (address.isIPv6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size))
        #expect(back == address && back?.description == text)
    }

    @Test func anErrorInTheBodyComesOutTyped() {
        struct Refused: Error, Equatable {}
        #expect(throws: Refused()) {
            try IPAddress("127.0.0.1")!.withSocketAddress(port: 1) { (_, _) throws(Refused) in throw Refused() }
        }
    }

    @Test func parsesStrictlyAndPrintsCanonically() {
        #expect(IPAddress("2001:0db8:0:0::1")?.description == "2001:db8::1")
        #expect(IPAddress("198.18.0.1")?.bytes == [198, 18, 0, 1])
        #expect(IPAddress("127.1") == nil)
        #expect(IPAddress("[::1]") == nil)
        #expect(IPAddress("::1")?.urlHost == "[::1]")
        #expect(IPAddress(bytes: [1, 2, 3]) == nil)
    }

    @Test func sortsIPv4FirstThenNumerically() {
        let sorted = ["2001:db8::1", "10.0.0.1", "9.0.0.1", "::1", "198.18.1.10"].compactMap(IPAddress.init).sorted()
        #expect(sorted.map(\.description) == ["9.0.0.1", "10.0.0.1", "198.18.1.10", "::1", "2001:db8::1"])
    }

    /// The bytes are held as two words: every byte keeps its place, in both halves.
    @Test func everyByteComesBackInItsPlace() throws {
        let v6 = (0..<16).map { UInt8(0x10 * ($0 % 16) + $0 % 16) }  // 0x00, 0x11, …, 0xff
        let address = try #require(IPAddress(bytes: v6))
        #expect(address.bytes == v6)
        #expect(address.description == "11:2233:4455:6677:8899:aabb:ccdd:eeff")
        #expect(IPAddress(address.description) == address)
        #expect(try #require(IPAddress(bytes: [255, 128, 1, 0])).bytes == [255, 128, 1, 0])
    }

    /// Zero in both families is two addresses, and an address read twice is one (equal and
    /// hashed alike, as the route questions' sets need).
    @Test func equalityAndHashingSeeTheFamilyAndEveryByte() throws {
        let addresses = ["0.0.0.0", "::", "::ffff:0.0.0.0", "2001:db8::1", "2001:db8::1:0:0:1", "2001:db9::1"]
        let parsed = Set(addresses.compactMap(IPAddress.init))
        #expect(parsed.count == addresses.count)
        let original = try #require(IPAddress("2001:db8::1"))
        let again = try #require(IPAddress(bytes: original.bytes))
        #expect(parsed.contains(again))
    }

    @Test func sortsByEveryByteIncludingTheHighBitAndTheLowHalf() {
        let sorted = ["255.0.0.1", "128.0.0.1", "127.255.255.255", "2001:db8::2", "2001:db8::1", "ffff::", "8000::"]
            .compactMap(IPAddress.init).sorted()
        #expect(
            sorted.map(\.description) == [
                "127.255.255.255", "128.0.0.1", "255.0.0.1", "2001:db8::1", "2001:db8::2", "8000::", "ffff::",
            ])
    }

    @Test func aSocketAddressOfAnotherFamilyIsNoAddress() {
        var unix = sockaddr()
        unix.sa_family = sa_family_t(AF_UNIX)
        #expect(withUnsafePointer(to: &unix) { IPAddress(socketAddress: $0) } == nil)
        #expect(IPAddress(socketAddress: nil) == nil)
    }
}
