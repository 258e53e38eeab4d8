import FoundationEssentials
import Reachable

/// What reachd knows of the nameservers between checks: each server's evaluation and the
/// document's `dns` derived from them. Pure: the checker and the route gate change it only
/// through these methods.
struct NameserverBook: Sendable {
    private struct Server: Sendable {
        let address: IPAddress
        var evaluation: ThresholdEvaluation<DNSFailureReason>
    }

    private var servers: [Server] = []
    private let evaluator: ThresholdEvaluator
    private(set) var status: DNSStatus

    init(name: String, failures: Int, since: Date) {
        evaluator = ThresholdEvaluator(failureThreshold: failures)
        status = DNSStatus(state: .unknown, name: name, since: since)
    }

    /// The servers' addresses, in resolv.conf's order.
    var addresses: [IPAddress] { servers.map(\.address) }

    /// resolv.conf was read (again): servers that stay keep their state; new ones are `unknown`.
    mutating func setServers(_ addresses: [IPAddress], at now: Date) {
        servers = addresses.map { address in
            servers.first { $0.address == address } ?? Server(address: address, evaluation: .unknown(since: now))
        }
        derive(at: now)
    }

    /// One query's answer (a missing route decides at once).
    mutating func record(_ failure: DNSFailureReason?, server: IPAddress, at now: Date) {
        guard let index = servers.firstIndex(where: { $0.address == server }) else { return }
        servers[index].evaluation = evaluator.next(
            after: servers[index].evaluation, failure: failure, decidesAtOnce: failure == .noRoute, at: now)
        derive(at: now)
    }

    /// Whether an answer ending in `failure` starts `server` failing: its last answer was good
    /// (`StallRecheck`). Asked before `record`.
    func startsFailing(_ failure: DNSFailureReason?, server: IPAddress) -> Bool {
        guard let evaluation = servers.first(where: { $0.address == server })?.evaluation else { return false }
        return StallRecheck.startsFailing(after: evaluation, failure: failure)
    }

    /// When to ask `server` again: soon while its verdict is being confirmed (below
    /// `--dns-failures`), else `interval` (`ThresholdEvaluator.confirmationDelay`).
    func nextDelay(for server: IPAddress, interval: Duration) -> Duration {
        guard let evaluation = servers.first(where: { $0.address == server })?.evaluation else { return interval }
        return evaluator.confirmationDelay(after: evaluation, interval: interval)
    }

    /// The route gate: servers the kernel has no usable route to are `failing` (`no-route`) at once.
    mutating func routesGone(_ unroutable: Set<IPAddress>, at now: Date) {
        for index in servers.indices where unroutable.contains(servers[index].address) {
            servers[index].evaluation = evaluator.next(
                after: servers[index].evaluation, failure: .noRoute, decidesAtOnce: true, at: now)
        }
        derive(at: now)
    }

    private mutating func derive(at now: Date) {
        status.servers = servers.map { server in
            let evaluation = server.evaluation
            let state: NameserverStatus.State =
                switch evaluation.state {
                case .unknown: .unknown
                case .reachable: .answering
                case .unreachable: .failing
                }
            return NameserverStatus(
                address: server.address.description, state: state, reason: evaluation.reasonIfUnreachable,
                since: evaluation.since)
        }
        status.deriveOverall(at: now)
    }
}
