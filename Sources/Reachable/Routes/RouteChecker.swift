import Synchronization

/// Asks the kernel, on a request socket of its own, which route it would use for one address
/// (`RTM_GETROUTE`, as `ip route get`; no packet is sent), for the target probes and the
/// connectivity check. Safe from any thread: one question at a time, each a few microseconds.
public final class RouteChecker: Sendable {
    private let requester: Mutex<NetlinkRequester>
    private let monitor: NetworkMonitor
    /// What this checker knows of the last batch's unroutable questions (`isUnroutableSinceBatch`).
    private let knownUnroutable = Mutex<KnownUnroutable?>(nil)
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
        guard let batch = monitor.unroutableSinceBatch else {
            knownUnroutable.withLock { $0 = nil }
            return false
        }
        return knownUnroutable.withLock { known in
            if known?.epoch != batch.epoch { known = KnownUnroutable(epoch: batch.epoch) }
            return known!.isUnroutable(question, in: batch.verdicts)
        }
    }

    /// The last batch's unroutable questions, looked up by value: in its verdicts one by one at
    /// first, then in a set made of them once it pays and the batch's document is out.
    ///
    /// After a link-down the batch answers almost every target's run
    /// (`ProbeScheduler.AnsweredByChange`); the few runs begun meanwhile (those under way when it
    /// came, timers due) check one question each. Made on the first check, the set of every
    /// question took the engine thread while the document was being written, on the core the
    /// writer's second half was waiting for; reading the verdicts takes microseconds a question
    /// (docs/scale.md). The set is made past `checksBeforeSet` checks (where it pays for itself),
    /// and not within `settling` of the first (while the batch's document is being made).
    private struct KnownUnroutable {
        static let checksBeforeSet = 32
        static let settling = Duration.milliseconds(50)
        let epoch: UInt64
        let firstCheck = ContinuousClock.now
        var checks = 0
        var questions: Set<RouteQuestion>?

        init(epoch: UInt64) {
            self.epoch = epoch
        }

        mutating func isUnroutable(_ question: RouteQuestion, in verdicts: RouteVerdicts) -> Bool {
            checks += 1
            if questions == nil, checks > Self.checksBeforeSet, ContinuousClock.now - firstCheck >= Self.settling {
                questions = verdicts.unroutableQuestions
            }
            return questions?.contains(question) ?? verdicts.isUnroutable(question)
        }
    }

    /// The source address a probe of `family` pinned to `egress` binds to (the interface's
    /// preferred one, so that policy routing by source applies); `nil` for the kernel's choice.
    public func source(of family: AddressFamily, via egress: Egress) -> IPAddress? {
        monitor.routingSnapshot.preferredSource(of: family, via: egress)
    }
}
