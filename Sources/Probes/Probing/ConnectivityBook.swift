import FoundationEssentials
import Reachable

/// What reachd knows of the connectivity check between checks: the host's last addresses, each
/// family's verdict, the backoff, and the document entry derived from them. Pure, like
/// `TargetBook`: the checker and the route gate change it only through these methods.
struct ConnectivityBook: Sendable {
    let spec: ConnectivitySpec
    /// Last resolved (or the literal): what the route questions ask about.
    private(set) var addresses: [IPAddress]
    private var families: [AddressFamily: ConnectivityFamilyStatus] = [:]
    /// The overall verdict while no family has addresses.
    private var withoutFamilies: (state: ConnectivityStatus.State, reason: ProbeFailureReason?) = (.unknown, nil)
    private var schedule: ConnectivitySchedule
    private(set) var status: ConnectivityStatus
    /// The families the document shows (`nil`: every one). An uplink's check shows only those
    /// the interface has been an uplink of since its check began (`uplinkFamilies`).
    private var shown: Set<AddressFamily>?
    /// When a probe elsewhere that started failing last ran this check.
    private var stallRecheck = StallRecheck()

    /// - Parameter proxy: what carries the check (`ProxyChoice`; never an uplink's): its addresses
    ///   are then the proxy's.
    init(spec: ConnectivitySpec, interval: Duration, since: Date, proxy: ProxyURL? = nil) {
        self.spec = spec
        let literal = proxy == nil ? spec.url.literal : proxy?.literal
        addresses = literal.map { [$0] } ?? []
        schedule = ConnectivitySchedule(interval: interval)
        status = ConnectivityStatus(state: .unknown, url: spec.url.text, proxy: proxy?.shown, since: since)
    }

    /// One check's result (or the part of it for the families it covers); returns the delay until
    /// the next check: the interval while every family with addresses is `full`, else
    /// NetworkManager's backoff from 1 s.
    ///
    /// - Parameters:
    ///   - pathUnreachable: the route-based state is `unreachable`: a name that never resolved
    ///     failed for want of a route.
    ///   - isLast: the check's end; a part before it (a family resolved before the other) moves
    ///     no backoff and returns `nil`.
    mutating func record(_ result: ProbePipeline.Result, pathUnreachable: Bool, isLast: Bool = true, at now: Date)
        -> Duration?
    {
        if let failure = result.unresolved {
            if failure == .noRoute, !addresses.isEmpty {
                routesGone(Set(addresses), pathUnreachable: pathUnreachable, at: now)
            } else {
                families = [:]
                withoutFamilies = addresses.isEmpty && pathUnreachable ? (.none, nil) : (.limited, failure)
                derive(at: now)
            }
        } else {
            // The families the result does not cover stay as they are.
            var kept = addresses.filter { !result.covers.contains($0.addressFamily) }
            families = families.filter { !result.covers.contains($0.key) }
            for probed in result.families {
                let (state, reason) = ConnectivityEvaluator.classify(probed.outcome)
                families[probed.family] = ConnectivityFamilyStatus(
                    state: state, reason: reason, detail: reason == nil ? nil : probed.outcome.detail)
            }
            for family in AddressFamily.allCases where result.failedLookups.contains(family) {
                // Its query failed while the other family resolved: `limited (dns)` if it had
                // addresses at the last resolution (kept while shown), else no addresses (`null`).
                let last = addresses.filter { $0.addressFamily == family }
                guard !last.isEmpty else { continue }
                families[family] = ConnectivityFamilyStatus(
                    state: .limited, reason: .dns, detail: result.lookupDetails[family])
                kept += last
            }
            addresses = (kept + result.addresses).sorted()
            derive(at: now)
        }
        guard isLast else { return nil }
        let allFull = status.state == .full && !status.degraded
        return schedule.delay(after: allFull ? .full : .limited)
    }

    /// A batch of netlink changes: each family whose every last known address is in `unroutable`
    /// is `none` at once; with no address known yet, the route-based state decides. The backoff
    /// starts again from 1 s on the new network.
    mutating func routesGone(_ unroutable: Set<IPAddress>, pathUnreachable: Bool, at now: Date) {
        schedule.reset()
        if addresses.isEmpty {
            guard pathUnreachable else { return }
            withoutFamilies = (.none, nil)
        }
        for family in AddressFamily.allCases {
            let known = addresses.filter { $0.addressFamily == family }
            guard !known.isEmpty, known.allSatisfy(unroutable.contains) else { continue }
            families[family] = ConnectivityFamilyStatus(state: .none)
        }
        derive(at: now)
    }

    /// The families the pinned interface is an uplink of now (a batch of netlink changes): a
    /// family it stopped being one of is `none` (shown while the interface is still an uplink of
    /// the other); one it never was one of is not shown (`null`). The backoff starts again.
    mutating func uplinkFamilies(_ current: Set<AddressFamily>, at now: Date) {
        let before = shown ?? []
        for family in before.subtracting(current) { families[family] = ConnectivityFamilyStatus(state: .none) }
        if before != current { schedule.reset() }
        shown = before.union(current)
        derive(at: now)
    }

    /// A target family or a nameserver started failing: whether to check now
    /// (`StallRecheck`: while `full`, at most once per 10 s).
    mutating func recheckForStall(at now: ContinuousClock.Instant) -> Bool {
        stallRecheck.allows(checkReads: status.state, at: now)
    }

    private mutating func derive(at now: Date) {
        for family in AddressFamily.allCases {
            status[family] = shown?.contains(family) == false ? nil : families[family]
        }
        status.unresolvedFamilies = checkedFamilies.subtracting(
            AddressFamilies(AddressFamily.allCases.filter { status[$0] != nil }))
        status.deriveOverall(withoutFamilies: withoutFamilies, at: now)
    }

    /// The families the check is for: those of the last successful resolution (`addresses` stay
    /// through a failed one), of those shown. An uplink's check is for every family the interface
    /// is an uplink of until an answer says which the host has; the kernel's choice for none.
    private var checkedFamilies: AddressFamilies {
        guard let shown else { return AddressFamilies(addresses.map(\.addressFamily)) }
        let uplinkOf = AddressFamilies(shown)
        return addresses.isEmpty ? uplinkOf : AddressFamilies(addresses.map(\.addressFamily)).intersection(uplinkOf)
    }
}
