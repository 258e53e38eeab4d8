import Glibc
import Reachable

/// The engine driver of `icmp://` probes: each probe sends `count` small echo requests (56 bytes
/// of payload) 100 ms apart, then one full-size echo (the output interface's MTU, never
/// fragmented), over one socket per family and way out (`EchoSocket`), and ends when every echo
/// is answered or refused, or at its deadline. Replies are matched by sequence (and, on a raw
/// socket, identifier), and from the address asked: another process pinging the same host
/// never counts. No thread per probe: the engine loop waits on the sockets. Engine thread only.
final class ICMPEchoes: EngineDriver, DescriptorOwner {
    /// Small echoes per probe (`--icmp-count`).
    private let count: Int
    static let spacing: Duration = .milliseconds(100)
    static let smallPayload = 56

    private struct SocketKey: Hashable {
        var family: AddressFamily
        var interface: String?
        var source: IPAddress?
    }

    /// One probe under way.
    private final class Ping {
        let job: ProbeJob
        let key: SocketKey
        let completion: @Sendable (ProbeOutcome) -> Void
        /// Echo `count` is the full-size one.
        let fullPayload: Int
        var sentAt: [Int: ContinuousClock.Instant] = [:]
        var answered: [Int: Duration] = [:]
        /// Echoes an ICMP error (or a refused send) settled.
        var refused: Set<Int> = []
        var unreachableDetail: String?
        var sendFailure: Int32?
        var pathMTU: ProbeQuality.PathMTU?
        var nextEcho = 0
        var nextSendAt: ContinuousClock.Instant

        init(job: ProbeJob, key: SocketKey, fullPayload: Int, completion: @escaping @Sendable (ProbeOutcome) -> Void) {
            self.job = job
            self.key = key
            self.fullPayload = fullPayload
            self.completion = completion
            nextSendAt = .now
        }
    }

    private var sockets: [SocketKey: EchoSocket] = [:]
    /// Each socket's echoes in flight: sequence → probe and echo number.
    private var inFlight: [SocketKey: [UInt16: (ping: Ping, echo: Int)]] = [:]
    private var pings: [ObjectIdentifier: Ping] = [:]

    private let loop: EventLoop

    init(settings: EngineSettings) {
        count = max(1, settings.echoCount)
        loop = settings.loop
    }

    /// Starts one probe of `job` (one routed address of one family).
    func start(_ job: ProbeJob, completion: @escaping @Sendable (ProbeOutcome) -> Void) {
        let family = job.address.addressFamily
        let pinned = job.egress.interface != nil
        let key = SocketKey(family: family, interface: job.egress.interface, source: pinned ? job.sourceAddress : nil)
        let socket: EchoSocket
        if let open = sockets[key] {
            socket = open
        } else {
            do throws(SystemError) {
                socket = try EchoSocket(family: family, interface: key.interface, source: key.source)
            } catch {
                return completion(ProbeOutcome(failure: .error, detail: error.description))
            }
            loop.watch(socket.descriptor, reading: true, writing: false, for: self)
        }
        sockets[key] = socket
        // IPv4: MTU − 20 (IP) − 8 (ICMP); IPv6: MTU − 40 − 8. Bounded by the largest IP packet.
        let mtu = min(job.outputInterface.flatMap(EchoSocket.mtu(of:)) ?? 1_500, 65_535)
        let ping = Ping(
            job: job, key: key, fullPayload: max(Self.smallPayload, mtu - (family == .ipv4 ? 28 : 48)),
            completion: completion)
        pings[ObjectIdentifier(ping)] = ping
        sendDue(ping, now: .now)
    }

    private func sendDue(_ ping: Ping, now: ContinuousClock.Instant) {
        guard let socket = sockets[ping.key] else { return }
        while ping.nextEcho <= count, ping.nextSendAt <= now, ping.job.deadline > now {
            let echo = ping.nextEcho
            let sequence = socket.nextSequence()
            let payload = echo == count ? ping.fullPayload : Self.smallPayload
            if let code = socket.sendEcho(to: ping.job.address, sequence: sequence, payload: payload) {
                ping.refused.insert(echo)
                if echo == count, code == EMSGSIZE {
                    ping.pathMTU = nil  // larger than the interface takes: nothing learned of the path
                } else if echo < count {
                    ping.sendFailure = code
                }
            } else {
                ping.sentAt[echo] = .now
                inFlight[ping.key, default: [:]][sequence] = (ping, echo)
            }
            ping.nextEcho += 1
            ping.nextSendAt = now + Self.spacing
        }
        finishIfSettled(ping, now: now)
    }

    /// Every echo sent and settled (answered or refused), or its deadline passed: the outcome.
    private func finishIfSettled(_ ping: Ping, now: ContinuousClock.Instant) {
        let settled =
            ping.nextEcho > count && (0...count).allSatisfy { ping.answered[$0] != nil || ping.refused.contains($0) }
        guard settled || now >= ping.job.deadline else { return }
        finish(ping)
    }

    private func finish(_ ping: Ping, cancelled: Bool = false) {
        guard pings.removeValue(forKey: ObjectIdentifier(ping)) != nil else { return }
        inFlight[ping.key] = inFlight[ping.key]?.filter { $0.value.ping !== ping }
        let small = (0..<count).compactMap { ping.answered[$0] }
        let sent = (0..<count).count { ping.sentAt[$0] != nil }
        var quality = ProbeQuality(roundTrips: small, echoesSent: sent, echoesAnswered: small.count)
        if !small.isEmpty {
            let headers = ping.key.family == .ipv4 ? 28 : 48
            if ping.answered[count] != nil {
                quality.pathMTU = .carried(bytes: ping.fullPayload + headers)
            } else if let discovered = ping.pathMTU {
                quality.pathMTU = discovered
            } else if ping.sentAt[count] != nil {
                quality.pathMTU = .blackhole(smallest: Self.smallPayload + headers)
            }
        }
        let outcome: ProbeOutcome
        if cancelled {
            outcome = .engineStopped
        } else if !small.isEmpty {
            outcome = ProbeOutcome(failure: nil, quality: quality)
        } else if let detail = ping.unreachableDetail {
            outcome = ProbeOutcome(failure: .hostUnreachable, detail: detail, quality: quality)
        } else if let code = ping.sendFailure {
            let reason: ProbeFailureReason =
                code == ENETUNREACH ? .noRoute : code == EHOSTUNREACH ? .hostUnreachable : .error
            outcome = ProbeOutcome(
                failure: reason, detail: SystemError("sendto", code: code).description, quality: quality)
        } else {
            outcome = ProbeOutcome(failure: .timeout, detail: "no echo reply within the timeout", quality: quality)
        }
        ping.completion(outcome)
    }

    private func handle(_ arrival: EchoSocket.Arrival, on key: SocketKey, now: ContinuousClock.Instant) {
        switch arrival {
        case .reply(let sequence, let from):
            guard let (ping, echo) = inFlight[key]?[sequence], from == ping.job.address,
                let sentAt = ping.sentAt[echo]
            else { return }
            inFlight[key]?[sequence] = nil
            ping.answered[echo] = now - sentAt
            finishIfSettled(ping, now: now)
        case .error(let sequence, let to, let unreachable, let mtu, let detail):
            guard let (ping, echo) = inFlight[key]?[sequence], to == nil || to == ping.job.address else { return }
            inFlight[key]?[sequence] = nil
            ping.refused.insert(echo)
            if let mtu, echo == count {
                ping.pathMTU = .discovered(bytes: mtu)
            } else if unreachable {
                ping.unreachableDetail = "ICMP destination unreachable: \(detail)"
            }
            finishIfSettled(ping, now: now)
        }
    }

    // MARK: - EngineDriver

    func processTimeouts(now: ContinuousClock.Instant) {
        for ping in Array(pings.values) {
            sendDue(ping, now: now)
        }
    }

    func nextWakeUp(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        pings.values.lazy.map { $0.nextEcho <= self.count ? min($0.nextSendAt, $0.job.deadline) : $0.job.deadline }
            .min()
    }

    func ready(_ descriptor: Int32, readable: Bool, writable: Bool) {
        let now = ContinuousClock.now
        for (key, socket) in sockets where socket.descriptor == descriptor {
            for arrival in socket.drain() { handle(arrival, on: key, now: now) }
        }
    }

    func shutdown() {
        for ping in Array(pings.values) { finish(ping, cancelled: true) }
        for socket in sockets.values { loop.unwatch(socket.descriptor, for: self) }
        sockets = [:]
        inFlight = [:]
    }
}
