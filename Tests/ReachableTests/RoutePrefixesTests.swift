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
