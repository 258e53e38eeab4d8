import Synchronization

/// Asks the kernel, on a request socket of its own, which route it would use for one address
/// (`RTM_GETROUTE`, as `ip route get`; no packet is sent), for the target probes and the
/// connectivity check. Safe from any thread: one question at a time, each a few microseconds.
public final class RouteChecker: Sendable {
    private let requester: Mutex<NetlinkRequester>
    private let monitor: NetworkMonitor
    /// The last batch's unroutable questions as a set, made on the first check after it.
    private let knownUnroutable = Mutex<(epoch: UInt64, questions: Set<RouteQuestion>)?>(nil)
    private let lookups = Atomic<Int>(0)

    /// Opens the request socket in the calling thread's network namespace (the monitor's).
    public init(monitor: NetworkMonitor) throws(SystemError) {
        requester = Mutex(try NetlinkRequester(calls: .live))
        self.monitor = monitor
    }

    /// Whether `egress` can carry `family` at all: the kernel's choice always may (each address
    /// is judged on its own); a pinned interface only while it is an uplink of the family — it
    /// has a routing-table entry toward the family's outside address that leaves through it.
    public func carries(_ family: AddressFamily, via egress: Egress) -> Bool {
        guard egress != .kernelChoice else { return true }
        guard let outside = monitor.outsideDestinations[family] else { return false }
        return route(to: outside, via: egress) != .noRoute
    }

    /// The verdict for one address out of `egress`.
    public func route(to address: IPAddress, via egress: Egress = .kernelChoice) -> RouteVerdict {
        if isUnroutableSinceBatch(RouteQuestion(address, via: egress)) { return .noRoute }
        return askKernel(address, via: egress)
    }

    /// The verdict for one address out of `egress`, asked of the kernel whatever the last batch
    /// found (the tests compare a batch's verdicts with these).
    package func askKernel(_ address: IPAddress, via egress: Egress = .kernelChoice) -> RouteVerdict {
        RouteVerdict.asking(address, via: egress, by: monitor.routingSnapshot) { address, interface, source in
            lookups.add(1, ordering: .relaxed)
            return requester.withLock { $0.lookup(address, outputInterface: interface, source: source) }
        }
    }

    /// How many route lookups this checker has asked the kernel (for the tests).
    package var kernelLookups: Int { lookups.load(ordering: .relaxed) }

    /// Whether the last batch of kernel notifications found no usable route for `question` and
    /// no batch came since (`NetworkMonitor.unroutableSinceBatch`): the kernel was asked that very
    /// question when the batch was judged, and its routes are as they were then. A question the
    /// batch found routable is asked again: the probe needs the route's interface and source.
    private func isUnroutableSinceBatch(_ question: RouteQuestion) -> Bool {
        unroutableSinceBatch?.contains(question) == true
    }

    /// The questions the last batch found without a usable route, while no batch came since
    /// (`nil` otherwise): made once per batch, shared by every probe that asks.
    package var unroutableSinceBatch: Set<RouteQuestion>? {
        guard let batch = monitor.unroutableSinceBatch else {
            knownUnroutable.withLock { $0 = nil }
            return nil
        }
        return knownUnroutable.withLock { known in
            if known?.epoch != batch.epoch { known = (batch.epoch, batch.verdicts.unroutableQuestions) }
            return known?.questions
        }
    }

    /// The source address a probe of `family` pinned to `egress` binds to (the interface's
    /// preferred one, so that policy routing by source applies); `nil` for the kernel's choice.
    public func source(of family: AddressFamily, via egress: Egress) -> IPAddress? {
        monitor.routingSnapshot.preferredSource(of: family, via: egress)
    }
}
