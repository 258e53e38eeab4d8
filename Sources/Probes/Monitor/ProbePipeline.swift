import Reachable

/// One probe from start to end, each stage able to end it with its own reason: resolve the name
/// (`dns`, `timeout`), ask the kernel for a route to each address (`no-route`), then connect or
/// request to the first routable address, pinned to it (`timeout`, `refused`, `http-status`,
/// `tls`, `error`). Every stage runs on the engine thread; route questions take microseconds.
struct ProbePipeline: Sendable {
    let engine: ProbeEngine
    let routes: RouteChecker

    /// What one run found; `interface` is the kernel's output interface for the probed address.
    struct Result: Sendable {
        var failure: ProbeFailureReason?
        var addresses: [IPAddress] = []
        var interface: String?
        var outcome: ProbeOutcome?
        var wasCancelled = false
    }

    /// Whether the kernel has no usable route to any of these addresses (and there are some).
    func noneRoutable(_ addresses: [IPAddress]) -> Bool {
        !addresses.isEmpty && addresses.allSatisfy { routes.route(to: $0) == .noRoute }
    }

    /// Runs the stages; `completion` is called once, on the engine thread.
    ///
    /// - Parameters:
    ///   - previousAddresses: what the name resolved to last time: when resolving fails and none of
    ///     those is routable any more, the reason is the route (DNS itself needed it).
    func run(
        _ url: TargetURL, timeout: Duration, expectedBody: [UInt8]? = nil, previousAddresses: [IPAddress],
        completion: @escaping @Sendable (Result) -> Void
    ) {
        let deadline = ContinuousClock.now + timeout
        let submitted = engine.resolve(url.host, deadline: deadline) { resolution in
            if resolution.wasCancelled { return completion(Result(failure: .error, wasCancelled: true)) }
            if let failure = resolution.failure {
                let reason = noneRoutable(previousAddresses) ? .noRoute : failure
                return completion(Result(failure: reason, addresses: reason == .noRoute ? previousAddresses : []))
            }
            route(url, resolution.addresses, deadline: deadline, expectedBody: expectedBody, completion: completion)
        }
        if !submitted { completion(Result(failure: .error, wasCancelled: true)) }
    }

    private func route(
        _ url: TargetURL, _ addresses: [IPAddress], deadline: ContinuousClock.Instant, expectedBody: [UInt8]?,
        completion: @escaping @Sendable (Result) -> Void
    ) {
        var passingFailure = false
        for address in addresses {
            switch routes.route(to: address) {
            case .routable(let interface):
                return probe(url, address, addresses, interface, deadline, expectedBody, completion)
            case .unknown:
                passingFailure = true
            case .noRoute:
                continue
            }
        }
        // The kernel could not be asked about some address: not a verdict about the route.
        completion(Result(failure: passingFailure ? .error : .noRoute, addresses: addresses))
    }

    private func probe(
        _ url: TargetURL, _ address: IPAddress, _ addresses: [IPAddress], _ interface: String,
        _ deadline: ContinuousClock.Instant, _ expectedBody: [UInt8]?,
        _ completion: @escaping @Sendable (Result) -> Void
    ) {
        guard url.scheme != .host else {
            return completion(Result(failure: nil, addresses: addresses, interface: interface))
        }
        let job = ProbeJob(url: url, address: address, deadline: deadline, expectedBodyPrefix: expectedBody)
        let submitted = engine.probe(job) { outcome in
            completion(
                Result(
                    failure: outcome.failure, addresses: addresses, interface: interface, outcome: outcome,
                    wasCancelled: outcome.wasCancelled))
        }
        if !submitted { completion(Result(failure: .error, wasCancelled: true)) }
    }
}
