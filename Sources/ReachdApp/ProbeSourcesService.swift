import Probes
import ServiceLifecycle

/// The probes as a service: they start sending when the group runs (not when built, so a failed
/// build never sent anything) and stop — engine thread joined — at graceful shutdown or cancellation.
struct ProbeSourcesService: Service {
    let probes: ProbeSources

    func run() async {
        probes.start()
        try? await gracefulShutdown()
        probes.stop()
    }
}
