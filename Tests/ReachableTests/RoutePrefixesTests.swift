import Reachable
import Testing

/// `RoutePrefixes`: which route questions of a batch one lookup answers for the rest.
@Suite struct RoutePrefixesTests {
    private func prefixes(_ routes: [(String, Int)]) -> RoutePrefixes {
        var prefixes = RoutePrefixes()
        for (address, length) in routes { prefixes.insert(IPAddress(address)!.bytes, length: length) }
        return prefixes
    }

    private func question(_ text: String, via egress: Egress = .kernelChoice) -> RouteQuestion {
        RouteQuestion(IPAddress(text)!, via: egress)
    }

    /// Addresses with the same longest containing prefix share a group; a more specific prefix
    /// (a host route, a rule's `to`) splits its addresses off, in both families.
    @Test func theLongestContainingPrefixIsTheGroup() {
        let table = prefixes([
            ("0.0.0.0", 0), ("198.18.0.0", 15), ("198.18.7.0", 24), ("198.18.7.9", 32),
            ("::", 0), ("2001:db8::", 32), ("2001:db8:0:7::", 64),
        ])
        let group = { (text: String) in table.group(of: IPAddress(text)!) }
        #expect(group("198.18.1.1") == group("198.19.200.3"), "both only in 198.18.0.0/15")
        #expect(group("198.18.7.1") != group("198.18.1.1"), "198.18.7.0/24 is more specific")
        #expect(group("198.18.7.9") != group("198.18.7.1"), "a host route of its own")
        #expect(group("10.0.0.1") == group("203.0.113.9"), "only the default route")
        #expect(group("10.0.0.1") != group("198.18.1.1"))
        #expect(group("2001:db8:5::1") == group("2001:db8:ffff::1"))
        #expect(group("2001:db8:0:7::1") != group("2001:db8:5::1"))
        #expect(group("2001:db9::1") == group("fd00::1"), "only ::/0")
        #expect(group("2001:db9::1") != group("10.0.0.1"), "families never share a group")
    }

    /// A table with hundreds of prefixes of one length (every bit of the quick filter taken) and
    /// a few of others: two addresses share a group exactly when their longest containing
    /// prefix, found by trying every prefix, is the same — in both families.
    @Test func aLargeTableGroupsAsTheLongestContainingPrefixFoundByHand() {
        var seed: UInt64 = 0x2545_F491_4F6C_DD1D
        func next() -> UInt64 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return seed >> 33
        }
        var routes: [(String, Int)] = [("0.0.0.0", 0), ("198.18.0.0", 15), ("::", 0), ("2001:db8::", 32)]
        for _ in 0..<300 { routes.append(("198.\(18 + next() % 2).\(next() % 256).0", 24)) }
        for _ in 0..<40 { routes.append(("198.\(18 + next() % 2).\(next() % 256).\(next() % 256)", 32)) }
        for _ in 0..<200 { routes.append(("2001:db8:\(String(next() % 0x1_0000, radix: 16))::", 48)) }
        let table = prefixes(routes)
        let parsed = routes.map { (IPAddress($0.0)!, $0.1) }
        // Every prefix by its family, length and bits: the longest containing one is found by
        // trying each length, longest first, against all of them.
        let known = Set(parsed.map { "\($0.0.isIPv6) \($0.1) \(Self.bits(of: $0.0, $0.1))" })
        let lengths = Set(parsed.map(\.1)).sorted(by: >)
        func longest(_ address: IPAddress) -> String? {
            lengths.lazy.map { "\(address.isIPv6) \($0) \(Self.bits(of: address, $0))" }.first(where: known.contains)
        }
        var addresses: [IPAddress] = []
        for _ in 0..<500 {
            addresses.append(IPAddress("198.\(18 + next() % 2).\(next() % 256).\(next() % 256)")!)
            addresses.append(IPAddress("2001:db8:\(String(next() % 0x1_0000, radix: 16))::\(next() % 9)")!)
        }
        // Each route's own address too: its group must be its own prefix (or a longer one).
        addresses += parsed.map(\.0)
        addresses += [IPAddress("10.0.0.1")!, IPAddress("fd00::1")!]
        for (a, b) in Array(zip(addresses, addresses.dropFirst(2))) + Array(zip(addresses, addresses.dropFirst(3))) {
            let expected = longest(a) == longest(b)
            #expect((table.group(of: a) == table.group(of: b)) == expected, "\(a) and \(b)")
        }
    }

    /// The first `length` bits of `address`.
    private static func bits(of address: IPAddress, _ length: Int) -> [UInt8] {
        address.bytes.enumerated().map { index, byte in
            let kept = min(8, max(0, length - index * 8))
            return kept == 0 ? 0 : byte & ~UInt8(0) << (8 - kept)
        }
    }

    /// No prefix at all (every route gone at a link-down): one group per family.
    @Test func addressesNoPrefixContainsShareOneGroupPerFamily() {
        let table = prefixes([("198.18.7.0", 24)])
        #expect(table.group(of: IPAddress("10.0.0.1")!) == table.group(of: IPAddress("203.0.113.9")!))
        #expect(table.group(of: IPAddress("10.0.0.1")!) != table.group(of: IPAddress("2001:db8::1")!))
    }

    /// A multipath route picks its next hop by the destination: that family is asked address by
    /// address; so is one with a prefix that does not fit its family. The other family still groups.
    @Test func aRefusedFamilyIsNeverGrouped() {
        var table = prefixes([("0.0.0.0", 0), ("::", 0)])
        table.refuseGrouping(of: .ipv6)
        #expect(table.group(of: IPAddress("2001:db8::1")!) == nil)
        #expect(table.group(of: IPAddress("10.0.0.1")!) != nil)
        table.insert(IPAddress("10.0.0.0")!.bytes, length: 33)
        #expect(table.group(of: IPAddress("10.0.0.1")!) == nil, "a /33 of IPv4 is not read as anything")
    }

    /// One lookup per egress and group; the verdict goes to the rest of the group.
    @Test func oneQuestionIsAskedPerEgressAndGroup() {
        let table = prefixes([("0.0.0.0", 0), ("198.18.9.0", 24)])
        var asked: [RouteQuestion] = []
        let questions = [
            question("10.0.0.1"), question("10.0.0.2"), question("198.18.9.1"), question("198.18.9.2"),
            question("10.0.0.3", via: .pinned(to: "wg0")), question("10.0.0.4", via: .pinned(to: "wg0")),
        ]
        let unroutable = table.unroutable(among: questions) { question in
            asked.append(question)
            return question.address.bytes[0] == 198 ? .noRoute : .routable(interface: "v0", source: nil)
        }
        #expect(asked == [questions[0], questions[2], questions[4]])
        #expect(unroutable == [false, false, true, true, false, false])
    }

    /// Groups that alternate are still asked once each: the last group's verdict is reused only
    /// for the same group, the rest are remembered.
    @Test func alternatingGroupsAreAskedOnceEachAndAnsweredByPlace() {
        let table = prefixes([("0.0.0.0", 0), ("198.18.9.0", 24)])
        var asked: [RouteQuestion] = []
        let questions = [question("10.0.0.1"), question("198.18.9.1"), question("10.0.0.2"), question("198.18.9.2")]
        let unroutable = table.unroutable(among: questions) { question in
            asked.append(question)
            return question.address.bytes[0] == 198 ? .noRoute : .routable(interface: "v0", source: nil)
        }
        #expect(asked == [questions[0], questions[1]])
        #expect(unroutable == [false, true, false, true])
    }

    /// A verdict that decides nothing (a passing failure to ask) is not given to the group.
    @Test func anUnknownVerdictIsAskedAgain() {
        let table = prefixes([("0.0.0.0", 0)])
        var answers: [RouteVerdict] = [.unknown, .noRoute]
        var asked = 0
        let questions = [question("10.0.0.1"), question("10.0.0.2"), question("10.0.0.3")]
        let unroutable = table.unroutable(among: questions) { _ in
            asked += 1
            return answers.removeFirst()
        }
        #expect(asked == 2)
        #expect(unroutable == [false, true, true])
    }

    /// The gates' questions come as one list, not made a set first: an address of a family that
    /// is not grouped, asked by many (10,000 targets on one multipath host), is asked once.
    @Test func anUngroupedAddressAskedManyTimesIsAskedOnce() {
        var table = prefixes([("0.0.0.0", 0), ("::", 0)])
        table.refuseGrouping(of: .ipv6)
        var asked: [RouteQuestion] = []
        let questions =
            Array(repeating: question("2001:db8::1"), count: 50) + [question("2001:db8::2")]
            + Array(repeating: question("2001:db8::1", via: .pinned(to: "wg0")), count: 2)
        let unroutable = table.unroutable(among: questions) { question in
            asked.append(question)
            return question.egress == .kernelChoice ? .noRoute : .routable(interface: "wg0", source: nil)
        }
        #expect(
            asked == [
                question("2001:db8::1"), question("2001:db8::2"), question("2001:db8::1", via: .pinned(to: "wg0")),
            ])
        #expect(unroutable == Array(repeating: true, count: 51) + [false, false])
    }
}
