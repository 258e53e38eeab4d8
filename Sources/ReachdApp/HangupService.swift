import Logging
import Probes
import ServiceLifecycle

/// SIGHUP reads `--targets-file` and `--web-config-file` again, as Prometheus and
/// blackbox_exporter reload their configuration; without either it is logged and changes nothing.
/// Each reload request (`ControlRequests`) is one reading, until the graceful shutdown begins. It
/// never ends the process: `ProcessSignals` reads SIGHUP as a request, where its default action
/// would exit 129, every stream reset, no drain.
struct HangupService: Service {
    let reloads: AsyncStream<Void>
    let probes: ProbeSources?
    var webConfig: WebConfigReloader?
    let logger: Logger

    func run() async {
        for await _ in reloads.cancelOnGracefulShutdown() {
            webConfig?.reload(.hangup)
            if probes?.reloadTargets() != true, webConfig == nil {
                logger.info("SIGHUP: there is no --targets-file or --web-config-file to read again; nothing changes")
            }
        }
    }
}
