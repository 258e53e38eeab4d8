import CMnl
import Glibc

/// Asks the kernel questions on a socket of its own — dumps and route lookups — so answers
/// never mix with the notifications on the event socket.
///
/// One request at a time: a second dump before the first is read fails with `EBUSY`.
/// Dumps are applied to the table message by message as they arrive, never collected first:
/// a host with 100,000 routes costs one datagram of memory, not 100,000 parsed messages.
final class NetlinkRequester {
    private let socket: NetlinkSocket
    private var sequence: UInt32 = 0
    /// Dumps keep only what the table keeps; a lookup's answer is a specific route in full.
    private var dumpParser = NetlinkParser(keepsSpecificRoutes: false)
    private var lookupParser = NetlinkParser()
    private var buffer: UnsafeMutableRawBufferPointer

    /// Whether the kernel filters dumps by interface (Linux 4.20 and later).
    private let filtersDumps: Bool

    /// Messages the kernel sent that failed validation, across every answer.
    var malformedCount: Int { dumpParser.malformedCount + lookupParser.malformedCount }

    init(calls: NetlinkSystemCalls) throws(SystemError) {
        socket = try NetlinkSocket(role: .requests, groups: [], nonBlocking: false, calls: calls)
        socket.setReceiveTimeout(seconds: 5)
        filtersDumps = socket.enableStrictChecking()
        buffer = .allocate(byteCount: 256 * 1024, alignment: 8)
    }

    deinit {
        buffer.deallocate()
    }

    /// Links, addresses and routes, each dump read to its end before the next is asked for.
    func dumpEverything() throws(SystemError) -> NetworkTable {
        var table = NetworkTable()
        for type in [RTM_GETLINK, RTM_GETADDR] {
            try dump({ NetlinkRequests.dump(Int32(type), sequence: $0) }, into: &table) { _ in }
        }
        try dumpRoutes(into: &table)
        return table
    }

    /// Replaces the table's default routes with what the kernel holds now (after a silent flush).
    func dumpRoutes(into table: inout NetworkTable) throws(SystemError) {
        try dump({ NetlinkRequests.dump(Int32(RTM_GETROUTE), sequence: $0) }, into: &table) { $0.removeAllRoutes() }
    }

    /// Re-reads only the routes through `interfaceIndex` (both families), after the kernel may
    /// have dropped some of them without a notification.
    func dumpRoutes(through interfaceIndex: Int32, into table: inout NetworkTable) throws(SystemError) {
        guard filtersDumps else { return try dumpRoutes(into: &table) }
        try dump({ NetlinkRequests.routeDump(through: interfaceIndex, sequence: $0) }, into: &table) {
            $0.removeRoutes(through: interfaceIndex)
        }
    }

    /// What a dump of route prefixes found.
    enum PrefixDump {
        case read(RoutePrefixes)
        /// More routes and rules than the limit (a host fed a full BGP table).
        case tooMany
        /// Interrupted by a change (which is a batch of its own) or unreadable; answers to a dump
        /// abandoned midway are dropped by their sequence number.
        case failed
    }

    /// Every route's destination and every rule's `to` prefix, both families, all tables
    /// (`RoutePrefixes`: what groups a batch's route questions), if there are at most `limit`.
    func routePrefixes(limit: Int) -> PrefixDump {
        do {
            return try dumpRoutePrefixes(limit: limit)
        } catch {
            return .failed
        }
    }

    private func dumpRoutePrefixes(limit: Int) throws(SystemError) -> PrefixDump {
        var prefixes = RoutePrefixes()
        var count = 0
        var complete = true
        for type in [RTM_GETROUTE, RTM_GETRULE] {
            let sequence = nextSequence()
            try socket.send(NetlinkRequests.dump(Int32(type), sequence: sequence))
            var done = false
            while !done {
                guard let received = try socket.receive(into: buffer) else {
                    throw SystemError("recvfrom", code: EAGAIN)
                }
                var failure: Int32 = 0
                let framed = NetlinkParser.forEachMessage(in: UnsafeRawBufferPointer(rebasing: buffer[0..<received])) {
                    header in
                    guard header.pointee.nlmsg_seq == sequence, !done else { return }
                    if header.pointee.nlmsg_flags & UInt16(NLM_F_DUMP_INTR) != 0 { complete = false }
                    switch Int32(header.pointee.nlmsg_type) {
                    case NLMSG_DONE:
                        done = true
                    case NLMSG_ERROR:
                        let error = mnl_nlmsg_get_payload(header).assumingMemoryBound(to: nlmsgerr.self)
                        let code =
                            mnl_nlmsg_get_payload_len(header) >= MemoryLayout<nlmsgerr>.size
                            ? 0 &- error.pointee.error : EPROTO
                        failure = code == 0 ? EPROTO : code  // an acknowledgement does not end a dump
                        done = true
                    default:
                        count += 1
                        // Past the limit the dump is still read to its end (one request at a time).
                        if count <= limit { prefixes.note(header) }
                    }
                }
                if !framed { complete = false }
                if failure != 0 { throw SystemError("dump", code: failure) }
            }
        }
        guard count <= limit else { return .tooMany }
        return complete ? .read(prefixes) : .failed
    }

    /// Applies every message of one dump to a copy of `table` that starts from `reset`, and
    /// installs it when the dump completes. A dump the kernel marks interrupted (the state
    /// changed while it was read) is asked again.
    private func dump(
        _ request: (UInt32) -> [UInt8], into table: inout NetworkTable, reset: (inout NetworkTable) -> Void
    ) throws(SystemError) {
        for _ in 0..<5 {
            var fresh = table
            reset(&fresh)
            if try !dumpOnce(request, into: &fresh) {
                table = fresh
                return
            }
        }
        throw SystemError("dump stayed interrupted", code: EAGAIN)
    }

    /// One dump applied as it streams in; returns whether the kernel marked it interrupted.
    private func dumpOnce(_ request: (UInt32) -> [UInt8], into table: inout NetworkTable) throws(SystemError) -> Bool {
        let sequence = nextSequence()
        try socket.send(request(sequence))
        var interrupted = false
        while true {
            for envelope in try receiveAnswer(sequence, parser: &dumpParser) {
                if envelope.flags & UInt16(NLM_F_DUMP_INTR) != 0 { interrupted = true }
                switch envelope.message {
                case .done:
                    return interrupted
                case .error(let code) where code != 0:
                    throw SystemError("dump", code: 0 &- code)  // wrapping: a garbled Int32.min must not trap
                default:
                    table.apply(envelope.message)
                }
            }
        }
    }

    /// The kernel's route for one destination address. A failure to ask (the socket broke, no
    /// answer in time) is `.failed` with the errno, which the caller tells apart from the
    /// kernel's own "no route" answers by `SystemError.isTransient`.
    ///
    /// `outputInterface` (not 0, a pinned egress): a route out of that interface only, and only
    /// when a routing-table entry matches (`RTM_F_FIB_MATCH`, asked first) — for a forced output
    /// interface without a matching route IPv4 answers an on-link guess (no gateway, no table
    /// entry) that would make every interface with an address a way out. That the answer leaves
    /// through the interface is `RouteVerdict`'s check (IPv6 may answer another one).
    ///
    /// `source`: asked as from that local address (policy routing by source applies). The kernel
    /// names no preferred source when it is the one asked with: the answer carries `source`.
    func lookup(_ destination: IPAddress, outputInterface: Int32 = 0, source: IPAddress? = nil) -> RouteLookup {
        if outputInterface != 0,
            matchedEntry(destination, outputInterface: outputInterface, source: source) == nil
        {
            return .failed(errno: ENETUNREACH)
        }
        do {
            let sequence = nextSequence()
            try socket.send(
                NetlinkRequests.routeLookup(
                    destination: destination, source: source, outputInterface: outputInterface,
                    sequence: sequence))
            while true {
                for envelope in try receiveAnswer(sequence, parser: &lookupParser) {
                    switch envelope.message {
                    case .route(let route):
                        return .route(
                            type: route.type, outputInterface: route.outputInterfaces.first,
                            preferredSource: route.preferredSource ?? source
                        )
                    case .error(let code) where code != 0:
                        return .failed(errno: 0 &- code)  // wrapping: a garbled Int32.min must not trap
                    default:
                        continue
                    }
                }
            }
        } catch {
            return .failed(errno: error.code)
        }
    }

    /// The routing-table entry the kernel matches for `destination` now (`RTM_F_FIB_MATCH`);
    /// `nil` when no entry matches or the question could not be asked.
    func matchedEntry(
        _ destination: IPAddress, outputInterface: Int32 = 0, source: IPAddress? = nil
    ) -> RouteRecord.Entry? {
        do {
            let sequence = nextSequence()
            try socket.send(
                NetlinkRequests.routeLookup(
                    destination: destination, source: source, outputInterface: outputInterface, fibMatch: true,
                    sequence: sequence))
            while true {
                for envelope in try receiveAnswer(sequence, parser: &lookupParser) {
                    switch envelope.message {
                    case .route(let route): return route.entry
                    case .error(let code) where code != 0: return nil
                    default: continue
                    }
                }
            }
        } catch {
            return nil
        }
    }

    private func nextSequence() -> UInt32 {
        sequence &+= 1
        return sequence
    }

    /// The next datagram's messages that answer `sequence` (stale answers are dropped).
    private func receiveAnswer(
        _ sequence: UInt32, parser: inout NetlinkParser
    ) throws(SystemError) -> [NetlinkEnvelope] {
        guard let count = try socket.receive(into: buffer) else { throw SystemError("recvfrom", code: EAGAIN) }
        return parser.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<count])).filter { $0.sequence == sequence }
    }
}
