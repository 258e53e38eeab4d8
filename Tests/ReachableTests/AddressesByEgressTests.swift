import Reachable
import Testing

/// `Set<RouteQuestion>.addressesByEgress`: the route gate's questions grouped by their way out.
@Suite struct AddressesByEgressTests {
    /// 1,000 questions out of 100 interfaces and the kernel's choice: each group holds exactly its
    /// own addresses, and is sized for them — not for all 1,000 (a hundred sets as large as the
    /// whole, at a link-down of 10,000 pinned targets).
    @Test func eachWayOutHasItsOwnAddressesInASetSizedForThem() {
        var questions = Set<RouteQuestion>()
        for index in 0..<1000 {
            let address = IPAddress("198.18.\(index / 250).\(index % 250 + 1)")!
            let egress: Egress = index % 101 == 0 ? .kernelChoice : .pinned(to: "eth\(index % 100)")
            questions.insert(RouteQuestion(address, via: egress))
        }
        let groups = questions.addressesByEgress
        #expect(groups.count == 101)
        #expect(groups.values.reduce(0) { $0 + $1.count } == 1000)
        for (egress, addresses) in groups {
            #expect(addresses == questions.addresses(via: egress))
            #expect(
                addresses.capacity < 4 * addresses.count + 16, "\(egress): \(addresses.capacity) for \(addresses.count)"
            )
        }
    }
}
