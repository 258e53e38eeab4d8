import Logging
import Probes
import ServiceLifecycle
import UnixSignals

/// SIGHUP reads `--targets-file` again, as Prometheus and blackbox_exporter reload their
/// configuration; without a targets file it is logged and changes nothing. Trapped so it never
/// ends the process: its default action would (exit 129, every stream reset, no drain).
struct HangupService: Service {
    let probes: ProbeService?
    let logger: Logger
    let signal: UnixSignal

    func run() async {
        let hangups = await UnixSignalsSequence(trapping: signal)
        for await _ in hangups.cancelOnGracefulShutdown() {
            if probes?.reloadTargets() != true {
                logger.info("SIGHUP: there is no --targets-file to read again; nothing changes")
            }
        }
    }
}
