/// What the cause's layers need of the targets, gathered in one pass: a fleet has thousands of
/// them and the cause is named with every document, so the layers do not each walk the list (and
/// fields are read in place, not copied out with their strings).
struct TargetSurvey {
    /// One family's verdict, as the survey reads it.
    private struct Verdict {
        var state: TargetStatus.State
        var reason: ProbeFailureReason?
        var isImpaired: Bool
    }

    /// Targets other than `dns://` ones whose name does not resolve (the target's or a family's
    /// reason `dns`), the first few in document order.
    private(set) var unresolved: [Int] = []
    /// The first target unreachable in every family.
    private(set) var firstUnreachable: Int?
    /// Per family, the first target not unreachable as a whole of which that family is unreachable.
    private(set) var firstFailingFamily: [AddressFamily: Int] = [:]
    /// Per family, the first target of which that family is reachable and impaired.
    private(set) var firstImpaired: [AddressFamily: Int] = [:]
    /// The families for which every unpinned target that has them fails as a dark path does
    /// (`timeout`, `host-unreachable`, `no-route`), at least one target having them.
    private(set) var darkFamilies: AddressFamilies = []

    /// The names `unresolved` keeps at most (the cause's words list the first three).
    static let unresolvedKept = 4

    init(_ targets: [TargetStatus], isPathFailure: (ProbeFailureReason?) -> Bool) {
        var seen: AddressFamilies = []
        var lit: AddressFamilies = []
        for index in targets.indices {
            let state = targets[index].state
            let isDNSKind = targets[index].url.hasPrefix("dns://")
            var familyUnresolved = false
            for family in AddressFamily.allCases {
                guard let verdict = Self.verdict(targets, index, family) else { continue }
                if verdict.state == .unreachable && verdict.reason == .dns { familyUnresolved = true }
                if state != .unreachable && verdict.state == .unreachable && firstFailingFamily[family] == nil {
                    firstFailingFamily[family] = index
                }
                if verdict.state == .reachable && verdict.isImpaired && firstImpaired[family] == nil {
                    firstImpaired[family] = index
                }
                if targets[index].via == nil {
                    seen.insert(family)
                    if verdict.state != .unreachable || !isPathFailure(verdict.reason) { lit.insert(family) }
                }
            }
            if state == .unreachable && firstUnreachable == nil { firstUnreachable = index }
            let nameFails = (state == .unreachable && targets[index].reason == .dns) || familyUnresolved
            if !isDNSKind && nameFails && unresolved.count < Self.unresolvedKept { unresolved.append(index) }
        }
        for family in AddressFamily.allCases where seen.contains(family) && !lit.contains(family) {
            darkFamilies.insert(family)
        }
    }

    /// A family's verdict read in place (the family's strings are not copied).
    private static func verdict(_ targets: [TargetStatus], _ index: Int, _ family: AddressFamily) -> Verdict? {
        switch family {
        case .ipv4:
            guard let state = targets[index].ipv4?.state else { return nil }
            return Verdict(
                state: state, reason: targets[index].ipv4?.reason,
                isImpaired: !(targets[index].ipv4?.impairments.isEmpty ?? true))
        case .ipv6:
            guard let state = targets[index].ipv6?.state else { return nil }
            return Verdict(
                state: state, reason: targets[index].ipv6?.reason,
                isImpaired: !(targets[index].ipv6?.impairments.isEmpty ?? true))
        }
    }
}
