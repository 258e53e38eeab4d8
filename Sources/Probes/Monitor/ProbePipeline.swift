import Reachable

/// One probe of a URL from start to end, each stage able to end it with its own reason: resolve
/// the name for both families (`dns`, `timeout`), then for **each family** with addresses, ask
/// the kernel for a route to each of its addresses (`no-route`) and connect or request to the
/// first routable one, pinned to it (`timeout`, `refused`, `host-unreachable`, `http-status`, `tls`, `error`). The
/// families are probed concurrently, each within the same deadline. Every stage runs on the engine
/// thread; route questions take microseconds.
struct ProbePipeline: Sendable {
    let engine: ProbeEngine
    let routes: RouteChecker

    /// One family's part of a run.
    struct FamilyResult: Sendable, Equatable {
        var family: AddressFamily
        /// The address probed; `nil` when none of the family is routable.
        var address: IPAddress?
        /// The kernel's output interface for `address`.
        var interface: String?
        var outcome: ProbeOutcome
    }

    /// What one run found.
    struct Result: Sendable {
        /// Why the name did not resolve (then `families` is empty); `no-route` when none of the
        /// previous addresses is routable any more.
        var unresolved: ProbeFailureReason?
        /// What the name resolved to (the previous addresses when `unresolved` is `no-route`).
        var addresses: [IPAddress] = []
        /// IPv4 first, each family that has addresses.
        var families: [FamilyResult] = []
        /// From the start to the last family's end.
        var duration: Duration = .zero
    }

    /// Runs the stages; `completion` is called once, on the engine thread (`nil`: the engine stopped).
    ///
    /// - Parameters:
    ///   - previousAddresses: what the name resolved to last time: when resolving fails and none of
    ///     those is routable any more, the reason is the route (DNS itself needed it).
    func run(
        _ url: TargetURL, timeout: Duration, expectedBody: [UInt8]? = nil, previousAddresses: [IPAddress],
        completion: @escaping @Sendable (Result?) -> Void
    ) {
        let started = ContinuousClock.now
        let deadline = started + timeout
        let submitted = engine.resolve(url.host, deadline: deadline) { resolution in
            if resolution.wasCancelled { return completion(nil) }
            if resolution.failure != nil {
                // The name did not resolve — no such name, a server that failed, or none that
                // answered in time: `dns` (the contract's reason), so DNS is never blamed on the
                // target itself; `no-route` when DNS itself needed the route that went away.
                let noRoute = noneRoutable(previousAddresses)
                return completion(
                    Result(
                        unresolved: noRoute ? .noRoute : .dns, addresses: noRoute ? previousAddresses : [],
                        duration: .now - started))
            }
            probeEachFamily(url, resolution.addresses, deadline, expectedBody) { families in
                guard let families else { return completion(nil) }
                completion(Result(addresses: resolution.addresses, families: families, duration: .now - started))
            }
        }
        if !submitted { completion(nil) }
    }

    /// Whether the kernel has no usable route to any of these addresses (and there are some).
    func noneRoutable(_ addresses: [IPAddress]) -> Bool {
        !addresses.isEmpty && addresses.allSatisfy { routes.route(to: $0) == .noRoute }
    }

    private func probeEachFamily(
        _ url: TargetURL, _ addresses: [IPAddress], _ deadline: ContinuousClock.Instant, _ expectedBody: [UInt8]?,
        completion: @escaping @Sendable ([FamilyResult]?) -> Void
    ) {
        let families = AddressFamily.allCases.filter { family in addresses.contains { $0.addressFamily == family } }
        let gathered = Gathered(expected: families.count, completion: completion)
        for family in families {
            probe(url, addresses.filter { $0.addressFamily == family }, family, deadline, expectedBody) {
                gathered.add($0)
            }
        }
    }

    /// One family: its first routable address, pinned.
    private func probe(
        _ url: TargetURL, _ addresses: [IPAddress], _ family: AddressFamily, _ deadline: ContinuousClock.Instant,
        _ expectedBody: [UInt8]?, completion: @escaping @Sendable (FamilyResult?) -> Void
    ) {
        var couldNotAsk = false
        for address in addresses {
            switch routes.route(to: address) {
            case .routable(let interface):
                guard url.scheme != .host else {
                    return completion(
                        FamilyResult(family: family, address: address, interface: interface, outcome: .succeeded))
                }
                let job = ProbeJob(url: url, address: address, deadline: deadline, expectedBodyPrefix: expectedBody)
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
        completion(FamilyResult(family: family, outcome: .failed(couldNotAsk ? .error : .noRoute)))
    }
}

/// Collects the families' results of one run; on the engine thread only (unchecked `Sendable`).
private final class Gathered: @unchecked Sendable {
    private var results: [ProbePipeline.FamilyResult] = []
    private var expected: Int
    private var cancelled = false
    private let completion: @Sendable ([ProbePipeline.FamilyResult]?) -> Void

    init(expected: Int, completion: @escaping @Sendable ([ProbePipeline.FamilyResult]?) -> Void) {
        self.expected = expected
        self.completion = completion
    }

    func add(_ result: ProbePipeline.FamilyResult?) {
        if let result { results.append(result) } else { cancelled = true }
        expected -= 1
        guard expected == 0 else { return }
        completion(cancelled ? nil : results.sorted { $0.family < $1.family })
    }
}

extension ProbeOutcome {
    /// A success decided without a packet (`host://`: resolving and routing is all).
    static let succeeded = ProbeOutcome(failure: nil)
}
