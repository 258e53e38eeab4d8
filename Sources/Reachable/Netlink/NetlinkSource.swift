import CMnl
import Glibc
import Synchronization

/// Asks the kernel which of a batch's route questions have no usable route, judged by the one
/// route rule. Only valid on the thread that handed it out, while its report runs.
struct RouteQuestions: @unchecked Sendable {
    // Unchecked: it is called only on the netlink thread, inside the report that carries it.
    /// Whether each question has no usable route, in their order.
    let unroutable: ([RouteQuestion]) -> [Bool]
}

/// The kernel side of the monitor: an event socket subscribed to every rtnetlink group that can
/// change reachability, a request socket for dumps and lookups, and one thread that sleeps until
/// either the kernel or `stop()` wakes it. Never polls.
///
/// When the kernel connection breaks, the source says so at once (the monitor shows `unknown`:
/// it does not know), then reopens both sockets and dumps again with growing pauses. Only when
/// that keeps failing does it report a failure for good — and it keeps trying after that, so a
/// kernel that comes back is followed again.
///
/// Unchecked `Sendable`: the sockets, table and parser are used by `seed()` before `start()`
/// and by the source thread after it, never by two threads at once; the rest is immutable or
/// behind a mutex.
final class NetlinkSource: @unchecked Sendable {
    /// What the source tells its owner, in order, from its thread.
    enum Report: Sendable {
        /// A full reading (also one whose path did not change), with what route checks elsewhere
        /// need to judge the kernel's answers. `batch` is set when it follows a drained batch of
        /// notifications: it answers route questions on this thread, valid only during the report.
        case path(NetworkPath, RoutingSnapshot, batch: RouteQuestions?)
        /// Notifications are waiting: a batch is about to be read, derived and judged. Said
        /// first, so that what probes learn meanwhile is known to come from before it.
        case batchArrived
        /// A batch was drained but no reading could be taken (a passing lookup failure): whatever
        /// depends on routes should still re-run now.
        case networkChanged
        /// The kernel cannot be observed right now. `givenUp` once every reopening attempt of a
        /// round failed: the monitor has failed for good (until a later attempt succeeds).
        case unobservable(cause: SystemError, attempts: Int, givenUp: Bool)
    }

    private static let groups: [UInt32] = [
        UInt32(RTNLGRP_LINK.rawValue),
        UInt32(RTNLGRP_IPV4_IFADDR.rawValue), UInt32(RTNLGRP_IPV6_IFADDR.rawValue),
        UInt32(RTNLGRP_IPV4_ROUTE.rawValue), UInt32(RTNLGRP_IPV6_ROUTE.rawValue),
        UInt32(RTNLGRP_IPV4_RULE.rawValue), UInt32(RTNLGRP_IPV6_RULE.rawValue),
        UInt32(RTNLGRP_IPV4_NETCONF.rawValue), UInt32(RTNLGRP_IPV6_NETCONF.rawValue),
    ]

    /// The two sockets, replaced together when the connection is reopened.
    private struct Connection {
        var events: NetlinkSocket
        var requester: NetlinkRequester
        /// Every route in full, specific ones too: their removals matter (`RemovedRoutes`), and
        /// notifications are few (dumps, which can be 100,000 routes, skip them).
        var parser = NetlinkParser()
    }

    private var connection: Connection {
        didSet { eventDescriptor.store(connection.events.descriptor, ordering: .relaxed) }
    }
    /// The event socket's descriptor, for `notificationsPending` on other threads.
    private let eventDescriptor = Atomic<Int32>(-1)
    private var table = NetworkTable()
    /// What the batch being read removed; lookups wait until the kernel has unlinked it.
    private var removedRoutes = RemovedRoutes()
    /// Whether the last grouping dump found more than `prefixLimit` routes and rules: route
    /// questions are then asked one by one until the connection is reopened.
    private var routingTablesTooLarge = false
    /// What a link set down is about to lose (read after each batch that set one down).
    private let removals = AddressRemovalsOnDown()
    private let wakeUp: WakeUpEvent
    private let configuration: MonitorConfiguration
    private let destinations: (ipv4: IPAddress?, ipv6: IPAddress?)
    private let classifier: TransportClassifier
    private let stats = Mutex(SourceStatistics())
    private let thread = Mutex<DedicatedThread?>(nil)

    var statistics: SourceStatistics { stats.withLock { $0 } }

    /// Opens both sockets and the wake-up descriptor. Subscribes before anything is dumped, so
    /// no change between the dump and the first read is missed.
    init(configuration: MonitorConfiguration) throws(SystemError) {
        self.configuration = configuration
        destinations = (
            IPAddress(configuration.ipv4Destination), IPAddress(configuration.ipv6Destination)
        )
        classifier = TransportClassifier(facts: configuration.interfaceFacts)
        connection = try Self.connect(configuration)
        wakeUp = try WakeUpEvent()
        eventDescriptor.store(connection.events.descriptor, ordering: .relaxed)
    }

    /// Whether the kernel has queued notifications this source has not read yet (from any
    /// thread): a probe that finds a route gone may be ahead of the batch that says so.
    func notificationsPending() -> Bool {
        var descriptor = pollfd(fd: eventDescriptor.load(ordering: .relaxed), events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) > 0 && descriptor.revents & Int16(POLLIN) != 0
    }

    private static func connect(_ configuration: MonitorConfiguration) throws(SystemError) -> Connection {
        let calls = configuration.netlinkSystemCalls
        return Connection(
            events: try NetlinkSocket(
                role: .events, groups: groups, nonBlocking: true,
                receiveBufferSize: configuration.receiveBufferSize, calls: calls
            ),
            requester: try NetlinkRequester(calls: calls)
        )
    }

    /// The first full reading, taken on the caller's thread so the status is meaningful as soon
    /// as the monitor exists. Call before `start`.
    func seed() throws(SystemError) -> (NetworkPath, RoutingSnapshot) {
        table = try connection.requester.dumpEverything()
        return (try derivePath() ?? .unknown, routingSnapshot())
    }

    /// Starts the thread; `report` receives everything the source learns, on that thread.
    func start(report: @escaping @Sendable (Report) -> Void) throws(SystemError) {
        try thread.withLock { thread throws(SystemError) in
            guard thread == nil else { return }
            thread = try DedicatedThread { [self] in run(report: report) }
        }
    }

    /// Wakes the thread and waits until it has ended; nothing is reported after this returns.
    /// Idempotent, and safe from the source thread itself (a monitor released inside a report).
    func stop() {
        wakeUp.signal()
        thread.withLock { $0 }?.join()
    }

    deinit {
        stop()
    }

    // MARK: - The source thread

    private func run(report: @Sendable (Report) -> Void) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 * 1024, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let cause = follow(buffer: buffer, report: report)
            guard let cause else { return }  // stopped
            report(.unobservable(cause: cause, attempts: 0, givenUp: false))
            guard reconnect(report: report) else { return }  // stopped while reconnecting
        }
    }

    /// Sleeps until the kernel or `stop()` wakes the thread; drains, derives and reports each
    /// batch. Returns `nil` when stopped, or why the kernel connection broke.
    private func follow(buffer: UnsafeMutableRawBufferPointer, report: @Sendable (Report) -> Void) -> SystemError? {
        var descriptors = [
            pollfd(fd: connection.events.descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeUp.rawValue, events: Int16(POLLIN), revents: 0),
        ]
        // Only while a route lookup failed for a passing reason (EBUSY, a timeout): ask again soon
        // rather than publish a guess. Otherwise the thread sleeps until something happens.
        var retryLookupAfter: Int32 = -1
        while true {
            let ready: Int32
            do {
                ready = try systemCall("poll") { poll(&descriptors, nfds_t(descriptors.count), retryLookupAfter) }
            } catch {
                return error
            }
            if descriptors[1].revents != 0 { return nil }
            if descriptors[0].revents != 0 { report(.batchArrived) }
            do {
                removedRoutes = RemovedRoutes()
                if ready > 0 { try awaitAddressRemovals(after: try drain(buffer: buffer), buffer: buffer) }
                var drained = ready > 0
                var path = try derivePath()
                var routing = routingSnapshot()
                // A change made while the kernel was being asked is in the lookups' answers but
                // not yet in the table (its notification came meanwhile): read it too, so one
                // document has both — an uplink's `connectivity` and its route, say. A few rounds
                // at most: a storm of changes must not hold the document back for ever.
                for _ in 0..<3 where path != nil && eventsPending() {
                    try awaitAddressRemovals(after: try drain(buffer: buffer), buffer: buffer)
                    drained = true
                    path = try derivePath()
                    routing = routingSnapshot()
                }
                if let path {
                    retryLookupAfter = -1
                    report(.path(path, routing, batch: drained ? routeQuestions() : nil))
                } else {
                    retryLookupAfter = retryLookupAfter < 0 ? 50 : min(retryLookupAfter * 2, 2000)
                    if ready > 0 { report(.networkChanged) }
                }
            } catch {
                return error
            }
        }
    }

    /// Whether a notification is waiting on the event socket (a poll that does not wait).
    private func eventsPending() -> Bool {
        var descriptor = pollfd(fd: connection.events.descriptor, events: Int16(POLLIN), revents: 0)
        return ((try? systemCall("poll") { poll(&descriptor, 1, 0) }) ?? 0) > 0
    }

    /// Reopens both sockets and dumps everything again, pausing longer after each failure. Every
    /// `recoveryAttempts` failures in a row are reported as given up; it goes on trying.
    /// Returns false if stopped meanwhile.
    private func reconnect(report: @Sendable (Report) -> Void) -> Bool {
        var attempts = 0
        var pause = configuration.recoveryPause
        while true {
            guard sleep(pause) else { return false }
            attempts += 1
            do {
                var fresh = try Self.connect(configuration)
                table = try fresh.requester.dumpEverything()
                swap(&connection, &fresh)
                routingTablesTooLarge = false
                stats.withLock { $0.reconnects += 1 }
                if let path = try derivePath() {
                    report(.path(path, routingSnapshot(), batch: routeQuestions()))
                } else {
                    report(.networkChanged)
                }
                return true
            } catch {
                let givenUp = attempts % configuration.recoveryAttempts == 0
                report(.unobservable(cause: error, attempts: attempts, givenUp: givenUp))
                pause = min(pause * 2, configuration.recoveryPauseLimit)
            }
        }
    }

    /// Waits `duration` unless stopped first; returns false if stopped.
    private func sleep(_ duration: Duration) -> Bool {
        var descriptor = pollfd(fd: wakeUp.rawValue, events: Int16(POLLIN), revents: 0)
        let deadline = ContinuousClock.now + duration
        while true {
            let left = deadline - .now
            guard left > .zero else { return true }
            let milliseconds = Int32(min(left / .milliseconds(1) + 1, 60_000))
            if ((try? systemCall("poll") { poll(&descriptor, 1, milliseconds) }) ?? 0) > 0 { return false }
        }
    }

    /// Reads every pending notification and applies it; then re-reads what the kernel changes
    /// without telling: all of it after lost events, else only the routes of interfaces that
    /// may have been flushed silently (`SilentFlushes`). Other changes cost no dump at all.
    /// Returns the links this batch set down.
    @discardableResult
    private func drain(buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Set<Int32> {
        var lostEvents = false
        var flushed = SilentFlushes()
        var count = 0
        while true {
            let received: Int?
            do {
                received = try connection.events.receive(into: buffer)
            } catch  where error.code == ENOBUFS {
                lostEvents = true
                continue
            }
            guard let received else { break }
            for envelope in connection.parser.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<received])) {
                count += 1
                flushed.note(envelope.message, before: table)
                removedRoutes.note(envelope.message)
                table.apply(envelope.message)
            }
        }
        var reread: [Int32] = []
        if lostEvents {
            table = try connection.requester.dumpEverything()
        } else if !flushed.isEmpty {
            table.removeRoutes(preferredSources: flushed.sources)
            reread = flushed.interfacesToReread(after: table)
            for index in reread {
                if table.links[index] != nil {
                    try connection.requester.dumpRoutes(through: index, into: &table)
                } else {
                    table.removeRoutes(through: index)
                }
            }
        }
        let malformed = connection.parser.malformedCount + connection.requester.malformedCount
        stats.withLock {
            $0.wakeUps += 1
            $0.messages += count
            $0.malformedMessages = malformed
            if lostEvents { $0.resyncs += 1 }
            $0.routeRereads += reread.count
        }
        return flushed.linksSetDown
    }

    /// After a batch that set links down: drains until the kernel has announced the removal of
    /// their IPv6 addresses (`AddressRemovalsOnDown`), at most `removalWait` — so a link going
    /// down is one document, not a second one with its addresses gone a moment later.
    private func awaitAddressRemovals(
        after setDown: Set<Int32>, buffer: UnsafeMutableRawBufferPointer
    ) throws(SystemError) {
        let deadline = ContinuousClock.now + Self.removalWait
        while removals.pending(setDown, in: table) {
            let left = deadline - .now
            guard left > .zero else { return }
            var descriptor = pollfd(fd: connection.events.descriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(left / .milliseconds(1)) + 1
            guard try systemCall("poll", { poll(&descriptor, 1, milliseconds) }) > 0 else { return }
            try drain(buffer: buffer)
        }
    }

    /// How long a link set down may take to lose its IPv6 addresses before the document goes out
    /// without waiting further (the kernel announces them within microseconds).
    static let removalWait: Duration = .milliseconds(20)

    /// Asks the kernel where outside traffic would go, then derives the path from the table.
    /// `nil` when a lookup failed for a passing reason (asked three times): no guess is made.
    /// Throws when the request socket itself is broken.
    private func derivePath() throws(SystemError) -> NetworkPath? {
        guard let ipv4 = try lookup(destinations.ipv4), let ipv6 = try lookup(destinations.ipv6) else { return nil }
        return derive(
            table: table, lookups: RouteLookups(ipv4: ipv4, ipv6: ipv6), classifier: classifier,
            meteredPatterns: configuration.meteredInterfacePatterns
        )
    }

    /// One family's lookup, told apart: the kernel's answer (a route, or "no route" errors such
    /// as `ENETUNREACH`), a passing failure to ask (`nil`), or a broken socket (thrown).
    private func lookup(_ destination: IPAddress?) throws(SystemError) -> RouteLookup? {
        guard let destination else { return .notAsked }
        for _ in 0..<3 {
            let answer = settledLookup(destination)
            guard case .failed(let code) = answer else { return answer }
            if Self.kernelAnswers.contains(code) { return answer }
            let error = SystemError("route lookup", code: code)
            guard error.isTransient else { throw error }
            stats.withLock { $0.transientLookupFailures += 1 }
        }
        return nil
    }

    /// Route questions for the monitor's route gates, answered on this thread with the request
    /// socket and judged against the table just read (one rule: `RouteVerdict`). Many questions
    /// are asked once per group of addresses the kernel cannot tell apart (`RoutePrefixes`, one
    /// dump of routes and rules), not once per address (docs/scale.md).
    private func routeQuestions() -> RouteQuestions {
        let routing = RoutingSnapshot(table)
        return RouteQuestions { [self] questions in
            let ask = { (question: RouteQuestion) -> RouteVerdict in
                RouteVerdict.asking(question.address, via: question.egress, by: routing) { address, interface, source in
                    self.settledLookup(address, outputInterface: interface, source: source)
                }
            }
            guard questions.count >= Self.questionsWorthGrouping, let prefixes = groupingPrefixes() else {
                // Each distinct question asked once.
                var verdicts: [RouteQuestion: Bool] = [:]
                return questions.map { question in
                    if let known = verdicts[question] { return known }
                    let gone = ask(question) == .noRoute
                    verdicts[question] = gone
                    return gone
                }
            }
            var grouped = 0
            let unroutable = prefixes.unroutable(among: questions, grouped: &grouped, asking: ask)
            stats.withLock { $0.groupedRouteQuestions += grouped }
            return unroutable
        }
    }

    /// The prefixes that group this batch's questions; `nil` when they cannot be read now or
    /// there are too many — remembered, so a host fed a full BGP table does not dump it for
    /// every batch (a reconnection tries again).
    private func groupingPrefixes() -> RoutePrefixes? {
        guard !routingTablesTooLarge else { return nil }
        switch connection.requester.routePrefixes(limit: Self.prefixLimit) {
        case .read(let prefixes): return prefixes
        case .tooMany: routingTablesTooLarge = true
        case .failed: break
        }
        return nil
    }

    /// Below this many questions each is asked on its own (a dump costs about two lookups).
    static let questionsWorthGrouping = 8
    /// The most routes and rules a grouping dump reads (a container has tens).
    static let prefixLimit = 10_000

    /// The snapshot of the table just read, with its uplinks when they are asked for: for every
    /// usable interface with a usable address of a family, whether the kernel has a route toward
    /// the family's outside address out of that interface (the pinned rule,
    /// `RouteVerdict.asking`). Two or four lookups per such interface, microseconds each.
    private func routingSnapshot() -> RoutingSnapshot {
        var routing = RoutingSnapshot(table)
        guard configuration.discoversUplinks else { return routing }
        for index in routing.usableInterfaces.sorted() {
            guard let name = routing.interfaceNames[index], let sources = routing.preferredSources[index] else {
                continue
            }
            for (family, destination) in [(AddressFamily.ipv4, destinations.ipv4), (.ipv6, destinations.ipv6)] {
                guard let destination, sources[family] != nil else { continue }
                let verdict = RouteVerdict.asking(destination, via: .pinned(to: name), by: routing) {
                    address, interface, source in
                    settledLookup(address, outputInterface: interface, source: source)
                }
                if case .routable = verdict { routing.uplinks[name, default: []].insert(family) }
            }
        }
        return routing
    }

    /// The kernel's route for `destination`, once the entry it matches is not one this batch
    /// removed (`RemovedRoutes`: IPv4 may not have unlinked it yet). Asks which entry matches
    /// first, then the route — never the other way round, or the route could come from an
    /// entry unlinked in between. Pauses 1, 2, 4 … 128 ms; after that (or when stopped) it
    /// answers as the kernel does.
    private func settledLookup(
        _ destination: IPAddress, outputInterface: Int32 = 0, source: IPAddress? = nil
    ) -> RouteLookup {
        var pause = 1
        while !removedRoutes.isEmpty, pause <= 128,
            let entry = connection.requester.matchedEntry(
                destination, outputInterface: outputInterface, source: source),
            removedRoutes.contains(entry)
        {
            stats.withLock { $0.staleLookups += 1 }
            guard sleep(.milliseconds(pause)) else { break }
            pause *= 2
        }
        return connection.requester.lookup(destination, outputInterface: outputInterface, source: source)
    }

    /// Errors that are the kernel's answer about routing itself, not a failure to ask: no route,
    /// a `prohibit`/`blackhole`/`unreachable` route, or the family switched off.
    private static let kernelAnswers: Set<Int32> = [
        ENETUNREACH, EHOSTUNREACH, EACCES, EPERM, EINVAL, ENETDOWN, EAFNOSUPPORT, EADDRNOTAVAIL,
    ]
}
