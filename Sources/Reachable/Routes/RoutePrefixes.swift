/// The prefixes that can tell two destinations apart in a route lookup: every route's
/// destination in every table and every rule's `to` selector, read from the kernel in one dump
/// (`NetlinkRequester.routePrefixes`). So a batch of route questions needs one lookup per group,
/// not one per address: a large fleet behind one default route is one question.
///
/// Why a group is answered alike: prefixes nest or are disjoint, so two addresses whose longest
/// containing prefix is the same lie in exactly the same routes and rules, and the kernel's
/// rule walk and longest-prefix match take the same steps for both. A route the kernel is still
/// unlinking when the dump is read (`RemovedRoutes`) only splits groups further — safe. What
/// does depend on the address itself is a multipath route's (or a nexthop object's) choice of
/// next hop, a hash of the destination: a family that has one is not grouped at all.
package struct RoutePrefixes: Sendable {
    /// One prefix of one family, its bits past `length` cleared; `length` -1 is the group of the
    /// addresses no prefix contains.
    package struct Group: Hashable, Sendable {
        var isIPv6: Bool
        var length: Int
        var high: UInt64
        var low: UInt64

        /// One word hashed, not four: a link-down looks up several groups a question
        /// (docs/scale.md).
        package func hash(into hasher: inout Hasher) {
            hasher.combine(mixed)
        }

        /// The four fields in one word, every bit of each counting.
        var mixed: UInt64 {
            (high &* 0x9E37_79B9_7F4A_7C15) ^ low ^ UInt64(length &+ 1) << 1 ^ (isIPv6 ? 1 : 0)
        }

        /// One of 64 bits, chosen by `mixed`: a group whose bit is not in a length's `seen` is
        /// not one of its prefixes (`Length`).
        var bit: UInt64 {
            1 << ((mixed &* 0xFF51_AFD7_ED55_8CCD) >> 58)
        }
    }

    /// One prefix length of a family, and the bits (`Group.bit`) of its prefixes: most lengths
    /// tried for an address hold none of its prefixes, and the bit says so without hashing
    /// (the route gate tries about four lengths a question: a set lookup for each, at every
    /// link-down, is what this saves; docs/scale.md).
    private struct Length: Sendable {
        let bits: Int
        var seen: UInt64 = 0
    }

    private var prefixes: Set<Group> = []
    /// Each family's prefix lengths, longest first: the ones worth trying for an address.
    private var ipv4Lengths: [Length] = []
    private var ipv6Lengths: [Length] = []
    private var ipv4Ungrouped = false
    private var ipv6Ungrouped = false

    package init() {}

    /// Adds a route's destination or a rule's `to` prefix (`bytes`: 4 or 16 network-order bytes,
    /// only the first `length` bits count). A prefix that does not fit its family leaves the
    /// family ungrouped: nothing unread is guessed.
    package mutating func insert(_ bytes: [UInt8], length: Int) {
        let isIPv6 = bytes.count == 16
        guard let address = IPAddress(bytes: bytes), length >= 0, length <= bytes.count * 8 else {
            if isIPv6 { ipv6Ungrouped = true } else { ipv4Ungrouped = true }
            return
        }
        let group = Self.group(address, length: length)
        guard prefixes.insert(group).inserted else { return }
        if isIPv6 { Self.add(group, to: &ipv6Lengths) } else { Self.add(group, to: &ipv4Lengths) }
    }

    /// Notes `group` under its length, adding the length (longest first) when it is new.
    private static func add(_ group: Group, to lengths: inout [Length]) {
        if let index = lengths.firstIndex(where: { $0.bits == group.length }) {
            lengths[index].seen |= group.bit
        } else {
            lengths.append(Length(bits: group.length, seen: group.bit))
            lengths.sort { $0.bits > $1.bits }
        }
    }

    /// A family whose lookups may differ inside one prefix (a multipath route, a nexthop
    /// object, something unreadable): each of its addresses is asked on its own.
    package mutating func refuseGrouping(of family: AddressFamily) {
        if family == .ipv6 { ipv6Ungrouped = true } else { ipv4Ungrouped = true }
    }

    /// The group `address` is answered with: its longest containing prefix; `nil` when its
    /// family is not grouped.
    package func group(of address: IPAddress) -> Group? {
        let isIPv6 = address.isIPv6
        guard !(isIPv6 ? ipv6Ungrouped : ipv4Ungrouped) else { return nil }
        for length in isIPv6 ? ipv6Lengths : ipv4Lengths {
            let candidate = Self.group(address, length: length.bits)
            if length.seen & candidate.bit != 0, prefixes.contains(candidate) { return candidate }
        }
        return Group(isIPv6: isIPv6, length: -1, high: 0, low: 0)
    }

    /// Whether each of `questions` is without a usable route (`RouteVerdict.noRoute`), in their
    /// order: one question asked per egress and group, its verdict given to the rest of the group.
    /// A verdict that decides nothing (`unknown`, a passing failure to ask) is not shared: the next
    /// one asks again.
    package func unroutable(
        among questions: [RouteQuestion], asking ask: (RouteQuestion) -> RouteVerdict
    ) -> [Bool] {
        var grouped = 0
        return unroutable(among: questions, grouped: &grouped, asking: ask)
    }

    /// The same, adding to `grouped` how many questions a group's verdict answered (not one
    /// asked, nor one asked before in the same list).
    package func unroutable(
        among questions: [RouteQuestion], grouped: inout Int, asking ask: (RouteQuestion) -> RouteVerdict
    ) -> [Bool] {
        struct Key: Hashable {
            var egress: Egress
            var group: Group
        }
        var answered: [Key: RouteVerdict] = [:]
        // An address of a family not grouped is asked once however many ask about it.
        var answeredAlone: [RouteQuestion: RouteVerdict] = [:]
        var result: [Bool] = []
        result.reserveCapacity(questions.count)
        var last: (key: Key, verdict: RouteVerdict)?
        for question in questions {
            let key = group(of: question.address).map { Key(egress: question.egress, group: $0) }
            let verdict: RouteVerdict
            if let key, let last, last.key == key {
                // A source's questions come in runs of one group: no hashing for those.
                verdict = last.verdict
                grouped += 1
            } else if let key, let known = answered[key] {
                verdict = known
                grouped += 1
            } else if key == nil, let known = answeredAlone[question] {
                verdict = known
            } else {
                verdict = ask(question)
                if verdict != .unknown {
                    if let key { answered[key] = verdict } else { answeredAlone[question] = verdict }
                }
            }
            if let key, verdict != .unknown { last = (key, verdict) }
            result.append(verdict == .noRoute)
        }
        return result
    }

    /// `address` cut to `length` bits, as two 64-bit halves (IPv4 in the high half).
    private static func group(_ address: IPAddress, length: Int) -> Group {
        Group(
            isIPv6: address.isIPv6, length: length, high: address.high & mask(keeping: min(length, 64)),
            low: address.low & mask(keeping: max(length - 64, 0)))
    }

    /// A 64-bit word with its first `bits` bits set.
    private static func mask(keeping bits: Int) -> UInt64 {
        bits == 0 ? 0 : ~UInt64(0) << UInt64(64 - bits)
    }
}
