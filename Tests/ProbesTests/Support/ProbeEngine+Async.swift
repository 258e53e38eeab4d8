import Probes
import Reachable

extension ProbeEngine {
    /// `probe` for tests: suspends until the completion (which runs on the engine thread).
    func probe(_ job: ProbeJob) async -> ProbeOutcome {
        await withCheckedContinuation { continuation in
            let accepted = probe(job) { continuation.resume(returning: $0) }
            if !accepted { continuation.resume(returning: ProbeOutcome(failure: .error, wasCancelled: true)) }
        }
    }

    /// `resolve` for tests, with a timeout from now: generous by default, so c-ares' own retries
    /// (1 s, then 2 s) fit when a busy machine delays a datagram; tests of timeouts pass their own.
    func resolve(
        _ host: String, via egress: Egress = .kernelChoice, timeout: Duration = .seconds(30)
    ) async -> ResolveOutcome {
        await withCheckedContinuation { continuation in
            let accepted = resolve(host, via: ResolverWay(egress), deadline: .now + timeout) {
                continuation.resume(returning: $0)
            }
            if !accepted {
                continuation.resume(returning: ResolveOutcome(addresses: [], failure: .error, wasCancelled: true))
            }
        }
    }

    /// Returns once the engine thread has taken everything submitted before this call: the wake-ups
    /// those submissions caused are then counted in `statistics`.
    func caughtUp() async {
        await withCheckedContinuation { continuation in
            if !perform({ continuation.resume() }) { continuation.resume() }
        }
    }

    /// Returns when a timer on the engine thread fires, `delay` from now. Submitting it wakes the
    /// engine once and the timer once more: an idle engine counts exactly two wake-ups meanwhile.
    func timerFired(after delay: Duration) async {
        await withCheckedContinuation { continuation in
            if !after(.now + delay, { continuation.resume() }) { continuation.resume() }
        }
    }
}
