import Reachable

/// One probe of a URL from start to end, each stage able to end it with its own reason: resolve
/// the name, then for **each family** with addresses, ask the kernel for a route to each of its
/// addresses (`no-route`) and connect or request to the first routable one, pinned to it
/// (`timeout`, `refused`, `host-unreachable`, `http-status`, `tls`, `error`). The families are
/// probed concurrently, each within the same deadline. Every stage runs on the engine thread;
/// route questions take microseconds. Through a proxy, every stage concerns the proxy
/// (`ProbeEndpoint`).
///
/// **Each family is resolved on its own** (RFC 8305, section 3): A and AAAA are separate
/// queries, so a server that drops or refuses AAAA cannot hold an IPv4 answer hostage. As soon
/// as one family has addresses it is probed — after the resolution delay (50 ms) while the
/// other has not answered — and its verdict is reported when its probe ends, without waiting for
/// a family still being resolved; that family joins in a later report. Families that resolved
/// together are reported together, as one result.
struct ProbePipeline: Sendable {
    let engine: ProbeEngine
    let routes: RouteChecker

    /// RFC 8305's resolution delay: how long a family that has answered waits for the other.
    static let resolutionDelay = Duration.milliseconds(50)

    /// One family's part of a run.
    struct FamilyResult: Sendable, Equatable {
        var family: AddressFamily
        /// The address probed; `nil` when none of the family is routable.
        var address: IPAddress?
        /// The kernel's output interface for `address`.
        var interface: String?
        var outcome: ProbeOutcome
    }

    /// What one run found, or the part of it ready before a family still being resolved.
    struct Result: Sendable {
        /// Why the name did not resolve for any family (then `families` is empty); `no-route`
        /// when none of the previous addresses is routable any more.
        var unresolved: ProbeFailureReason?
        /// `unresolved` in words (`NXDOMAIN from 198.18.0.1`).
        var unresolvedDetail: String?
        /// The families whose verdict this result carries: both for a whole run; fewer when a
        /// family was reported before the other resolved, or joins after it.
        var covers: Set<AddressFamily> = Set(AddressFamily.allCases)
        /// What the covered families resolved to (the previous addresses when `unresolved` is
        /// `no-route`).
        var addresses: [IPAddress] = []
        /// IPv4 first, each covered family that has addresses.
        var families: [FamilyResult] = []
        /// Covered families whose query got no usable answer (no server in time, SERVFAIL,
        /// REFUSED from every server) while another family resolved: nothing is known of their
        /// addresses from this run.
        var failedLookups: Set<AddressFamily> = []
        /// Each failed lookup in words.
        var lookupDetails: [AddressFamily: String] = [:]
        /// From the start to the end of the last covered family.
        var duration: Duration = .zero
    }

    /// Runs the stages on the engine thread.
    ///
    /// - Parameters:
    ///   - egress: the way out, for resolving, routing and probing alike.
    ///   - proxy: what carries the request (`ProxyChoice`): then the proxy's name is resolved and
    ///     its addresses routed and probed (`ProbeEndpoint`), and the failures that concern it say so.
    ///   - previousAddresses: what the name resolved to last time: when resolving fails and none of
    ///     those is routable any more, the reason is the route (DNS itself needed it).
    ///   - report: a part of the run, ready while another family is still being resolved (zero or
    ///     more times, always before `completion`).
    ///   - completion: the rest of the run; called once (`nil`: the engine stopped).
    func run(
        _ url: TargetURL, via egress: Egress = .kernelChoice, proxy: ProxyURL? = nil, timeout: Duration,
        expectedBody: [UInt8]? = nil, previousAddresses: [IPAddress],
        report: @escaping @Sendable (Result) -> Void = { _ in },
        completion: @escaping @Sendable (Result?) -> Void
    ) {
        let endpoint = ProbeEndpoint(url, proxy: proxy)
        var (report, completion) = (report, completion)
        if proxy != nil {
            // Through a proxy, what concerns it says so (no closure more per run without one).
            (report, completion) = (
                { [report] result in report(endpoint.labelled(result)) },
                { [completion] result in completion(result.map { endpoint.labelled($0) }) }
            )
        }
        let run = FamilyRun(
            pipeline: self, url: url, proxy: proxy, egress: egress, deadline: .now + timeout,
            expectedBody: expectedBody, previousAddresses: previousAddresses, report: report, completion: completion)
        // A pinned interface that is no uplink of a family: that family is `no-route` at once,
        // without a query (nothing is sent through another interface).
        // (An IP literal has one family: the other is not the target's.)
        let families = endpoint.literal.map { [$0.addressFamily] } ?? AddressFamily.allCases
        let carried = Set(families.filter { routes.carries($0, via: egress) })
        run.notCarried(Set(families).subtracting(carried))
        if let literal = endpoint.literal { return run.literal(literal) }
        if carried.isEmpty { return run.nothingToResolve() }
        let way = ResolverWay(
            egress, ipv4Source: routes.source(of: .ipv4, via: egress), ipv6Source: routes.source(of: .ipv6, via: egress)
        )
        for family in AddressFamily.allCases where carried.contains(family) {
            let submitted = engine.resolve(endpoint.host, family: family, via: way, deadline: run.deadline) {
                outcome in
                run.resolved(family, outcome)
            }
            if !submitted { return run.cancel() }
        }
    }

    /// Whether the kernel has no usable route to any of these addresses out of `egress` (and
    /// there are some).
    func noneRoutable(_ addresses: [IPAddress], via egress: Egress) -> Bool {
        !addresses.isEmpty && addresses.allSatisfy { routes.route(to: $0, via: egress) == .noRoute }
    }

    /// The families of `addresses` of which none is routable out of `egress`.
    func unroutableFamilies(_ addresses: [IPAddress], via egress: Egress) -> Set<AddressFamily> {
        Set(
            AddressFamily.allCases.filter { family in
                noneRoutable(addresses.filter { $0.addressFamily == family }, via: egress)
            })
    }

    /// A failed query in words: `no route to the nameserver …` when the kernel has no usable
    /// route to any of those asked — c-ares 1.18 reports the send that could not leave as a
    /// refused connection —, else what c-ares answered.
    func lookupFailure(_ outcome: ResolveOutcome, via egress: Egress) -> String? {
        guard noneRoutable(outcome.nameservers, via: egress) else { return outcome.detail }
        return FailureDetail.noRoute(toNameservers: outcome.nameservers)
    }

    /// One family: its first routable address, pinned.
    fileprivate func probe(
        _ url: TargetURL, via egress: Egress, proxy: ProxyURL?, _ addresses: [IPAddress], _ family: AddressFamily,
        _ deadline: ContinuousClock.Instant, _ expectedBody: [UInt8]?,
        completion: @escaping @Sendable (FamilyResult?) -> Void
    ) {
        var couldNotAsk = false
        for address in addresses {
            switch routes.route(to: address, via: egress) {
            case .routable(let interface, let source):
                let job = ProbeJob(
                    url: url, address: address, proxy: proxy, egress: egress, sourceAddress: source,
                    outputInterface: interface, deadline: deadline, expectedBodyPrefix: expectedBody)
                let submitted = engine.probe(job) { outcome in
                    completion(
                        outcome.wasCancelled
                            ? nil
                            : FamilyResult(family: family, address: address, interface: interface, outcome: outcome))
                }
                if !submitted { completion(nil) }
                return
            case .unknown:
                couldNotAsk = true
            case .noRoute:
                continue
            }
        }
        // The kernel could not be asked about some address: not a verdict about the route.
        completion(
            FamilyResult(
                family: family,
                outcome: couldNotAsk
                    ? .failed(.error, detail: "the kernel could not be asked for a route")
                    : .failed(.noRoute, detail: TargetFamilyStatus.noRouteDetail)))
    }
}

/// One run's families between their queries, their probes and the reports; on the engine thread
/// only (unchecked `Sendable`).
private final class FamilyRun: @unchecked Sendable {
    /// What one family's query came to.
    private enum Lookup {
        case pending
        /// An answer: the family's addresses, possibly none (NODATA, NXDOMAIN).
        case answered([IPAddress])
        /// No usable answer (timeout, SERVFAIL, REFUSED, …).
        case failed
        /// Not asked: the pinned egress is no uplink of the family (`no-route`).
        case notCarried
    }

    let deadline: ContinuousClock.Instant
    private let pipeline: ProbePipeline
    private let url: TargetURL
    private let proxy: ProxyURL?
    private let egress: Egress
    private let expectedBody: [UInt8]?
    private let previousAddresses: [IPAddress]
    private let report: @Sendable (ProbePipeline.Result) -> Void
    private let completion: @Sendable (ProbePipeline.Result?) -> Void
    private let started = ContinuousClock.now

    private var lookups: [AddressFamily: Lookup] = [.ipv4: .pending, .ipv6: .pending]
    private var launched: Set<AddressFamily> = []
    /// Probes under way.
    private var probing = 0
    /// Finished probes not reported yet.
    private var finished: [ProbePipeline.FamilyResult] = []
    private var unreported = Set(AddressFamily.allCases)
    private var delayStarted = false
    /// The URL's host is an IP literal: its lookups are made up, nothing was asked.
    private var isLiteral = false
    /// Why a family's query failed or found nothing, in words.
    private var lookupDetails: [AddressFamily: String] = [:]
    private var ended = false

    init(
        pipeline: ProbePipeline, url: TargetURL, proxy: ProxyURL?, egress: Egress, deadline: ContinuousClock.Instant,
        expectedBody: [UInt8]?,
        previousAddresses: [IPAddress], report: @escaping @Sendable (ProbePipeline.Result) -> Void,
        completion: @escaping @Sendable (ProbePipeline.Result?) -> Void
    ) {
        self.pipeline = pipeline
        self.url = url
        self.proxy = proxy
        self.egress = egress
        self.deadline = deadline
        self.expectedBody = expectedBody
        self.previousAddresses = previousAddresses
        self.report = report
        self.completion = completion
    }

    /// A family's query ended.
    func resolved(_ family: AddressFamily, _ outcome: ResolveOutcome) {
        guard !ended else { return }
        if outcome.wasCancelled { return cancel() }
        lookups[family] = outcome.failure == nil ? .answered(outcome.addresses) : .failed
        lookupDetails[family] = outcome.failure == nil ? outcome.detail : pipeline.lookupFailure(outcome, via: egress)
        if !isPending {
            launchAnswered()
        } else if !outcome.addresses.isEmpty, !delayStarted {
            // The other family has the resolution delay to answer before this one is probed alone.
            delayStarted = true
            let submitted = pipeline.engine.after(.now + ProbePipeline.resolutionDelay) { [self] in
                guard !ended else { return }
                launchAnswered()
                settle()
            }
            if !submitted { return cancel() }
        }
        settle()
    }

    /// The families a pinned egress cannot carry: decided before anything is asked.
    func notCarried(_ families: Set<AddressFamily>) {
        for family in families { lookups[family] = .notCarried }
    }

    /// An IP literal: one family, known without DNS.
    func literal(_ address: IPAddress) {
        isLiteral = true
        for family in AddressFamily.allCases where lookups[family].map(Self.isPending) ?? true {
            lookups[family] = .answered(family == address.addressFamily ? [address] : [])
        }
        nothingToResolve()
    }

    /// Every family is decided without a query.
    func nothingToResolve() {
        launchAnswered()
        settle()
    }

    private static func isPending(_ lookup: Lookup) -> Bool {
        if case .pending = lookup { true } else { false }
    }

    /// The engine stopped: the run ends without a result.
    func cancel() {
        guard !ended else { return }
        ended = true
        completion(nil)
    }

    private var isPending: Bool {
        lookups.values.contains(where: Self.isPending)
    }

    /// Starts the probe of every family with addresses not probed yet. All are counted before the
    /// first starts: a probe may end at once (`host://`, no route), and must not report alone.
    private func launchAnswered() {
        var ready: [(AddressFamily, [IPAddress])] = []
        for family in AddressFamily.allCases where !launched.contains(family) {
            switch lookups[family] {
            case .answered(let addresses) where !addresses.isEmpty: ready.append((family, addresses))
            case .notCarried:
                launched.insert(family)
                finished.append(
                    ProbePipeline.FamilyResult(
                        family: family, outcome: .failed(.noRoute, detail: TargetFamilyStatus.noRouteDetail)))
            default: break
            }
        }
        launched.formUnion(ready.map(\.0))
        probing += ready.count
        for (family, addresses) in ready {
            pipeline.probe(url, via: egress, proxy: proxy, addresses, family, deadline, expectedBody) { [self] result in
                guard !ended else { return }
                guard let result else { return cancel() }
                finished.append(result)
                probing -= 1
                settle()
            }
        }
    }

    /// Reports what is ready once no probe is under way: everything when no query is pending
    /// (the run ends), else the families probed so far.
    private func settle() {
        guard !ended, probing == 0 else { return }
        if !isPending {
            ended = true
            return completion(result(covering: unreported))
        }
        let ready = Set(finished.map(\.family))
        guard !ready.isEmpty else { return }
        report(result(covering: ready))
        unreported.subtract(ready)
    }

    /// Both families' queries failed while one family's last addresses lost their route (and the
    /// other's did not): that family is `no-route`, as the route gate has judged it from the same
    /// routes, and only the other failed its lookup (`dns`). Not the name's failure: were it
    /// judged so, the family the gate had just marked `no-route` would read `dns` in the next
    /// document, for one change. `nil` when no family lost its route.
    private func splitByRoute(_ failed: Set<AddressFamily>) -> ProbePipeline.Result? {
        let unroutable = pipeline.unroutableFamilies(previousAddresses, via: egress)
        guard !unroutable.isEmpty else { return nil }
        var result = ProbePipeline.Result(duration: .now - started)
        result.families = unroutable.sorted().map { family in
            ProbePipeline.FamilyResult(
                family: family, outcome: .failed(.noRoute, detail: TargetFamilyStatus.noRouteDetail))
        }
        result.addresses = previousAddresses.filter { unroutable.contains($0.addressFamily) }
        result.failedLookups = failed.subtracting(unroutable)
        result.lookupDetails = lookupDetails.filter { result.failedLookups.contains($0.key) }
        return result
    }

    private func result(covering covered: Set<AddressFamily>) -> ProbePipeline.Result {
        var result = ProbePipeline.Result(covers: covered, duration: .now - started)
        var failed: Set<AddressFamily> = []
        for family in AddressFamily.allCases where covered.contains(family) {
            switch lookups[family] {
            case .answered(let addresses): result.addresses += addresses
            case .failed: failed.insert(family)
            case .pending, .notCarried, nil: break
            }
        }
        result.families = finished.filter { covered.contains($0.family) }.sorted { $0.family < $1.family }
        finished.removeAll { covered.contains($0.family) }
        // A name asked for no family (a pinned interface that is no uplink of either) is not
        // unresolved: each family is `no-route`.
        let askedAny = !isLiteral && lookups.values.contains { if case .notCarried = $0 { false } else { true } }
        if covered.count == AddressFamily.allCases.count, result.addresses.isEmpty, askedAny {
            result.families = []
            // No family resolved — no such name, a server that failed, or none that answered in
            // time: `dns` (the contract's reason), so DNS is never blamed on the target itself;
            // `no-route` when DNS itself needed the route that went away.
            let noRoute = pipeline.noneRoutable(previousAddresses, via: egress)
            if !noRoute, failed.count == AddressFamily.allCases.count, let split = splitByRoute(failed) {
                return split
            }
            result.unresolved = noRoute ? .noRoute : .dns
            result.unresolvedDetail =
                noRoute ? TargetFamilyStatus.noRouteDetail : (lookupDetails[.ipv4] ?? lookupDetails[.ipv6])
            result.addresses = noRoute ? previousAddresses : []
            return result
        }
        result.failedLookups = failed
        result.lookupDetails = lookupDetails.filter { failed.contains($0.key) }
        return result
    }
}
