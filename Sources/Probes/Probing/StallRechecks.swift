import Synchronization

/// Carries "a probe started failing" from the targets and the nameserver check to the
/// connectivity checks (`StallRecheck`): the checks are made after them (each source's route gate
/// joins in the order it was made), so they are connected here once made, before anything runs.
final class StallRechecks: Sendable {
    private let checks = Mutex<(connectivity: ConnectivityChecker?, uplinks: UplinkChecker?)>((nil, nil))

    /// The checks to run; set once, before the probes start.
    func connect(connectivity: ConnectivityChecker?, uplinks: UplinkChecker?) {
        checks.withLock { $0 = (connectivity, uplinks) }
    }

    /// A target family or a nameserver started failing: the connectivity check, and the check of
    /// each uplink the failing families went out of (`--per-uplink`).
    func startedFailing(uplinks interfaces: Set<String> = []) {
        let (connectivity, uplinks) = checks.withLock { $0 }
        connectivity?.recheckForStall()
        for interface in interfaces.sorted() { uplinks?.recheckForStall(of: interface) }
    }
}
