import Logging
import Probes
import ServiceLifecycle
import UnixSignals

/// SIGHUP reads `--targets-file` and `--web-config-file` again, as Prometheus and
/// blackbox_exporter reload their configuration; without either it is logged and changes nothing. Trapped so it never
/// ends the process: its default action would (exit 129, every stream reset, no drain).
struct HangupService: Service {
    let probes: ProbeSources?
    var webConfig: WebConfigReloader?
    let logger: Logger
    let signal: UnixSignal

    func run() async {
        let hangups = await UnixSignalsSequence(trapping: signal)
        for await _ in hangups.cancelOnGracefulShutdown() {
            webConfig?.reload(.hangup)
            if probes?.reloadTargets() != true, webConfig == nil {
                logger.info("SIGHUP: there is no --targets-file or --web-config-file to read again; nothing changes")
            }
        }
    }
}
