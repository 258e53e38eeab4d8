import FoundationEssentials
import Prometheus

/// Which reachd runs and what configuration it applied: `reachd_build_info`, the last reading of
/// the configuration (the command line at start, `--targets-file` on a reload) and of
/// `--web-config-file` — what an alert on a refused reload reads.
final class ConfigurationMetrics: Sendable {
    private let registry: PrometheusCollectorRegistry
    private let reloadSuccessful: Gauge
    private let reloadSuccessTime: Gauge

    /// - Parameters:
    ///   - version: reachd's version, a label of `reachd_build_info`.
    ///   - configured: when the configuration was read (at start, the targets with it).
    init(registry: PrometheusCollectorRegistry, version: String, configured: Date) {
        self.registry = registry
        registry.makeGauge(
            descriptor: .reachd("build_info", help: Help.buildInfo),
            labels: [("version", version), ("libmicrohttpd", MicroHTTPDVersion.libmicrohttpd)]
        ).set(to: 1)
        reloadSuccessful = registry.makeGauge(
            descriptor: .reachd("config_last_reload_successful", help: Help.reloadSuccessful), labels: [])
        reloadSuccessTime = registry.makeGauge(
            descriptor: .reachd("config_last_reload_success_timestamp_seconds", help: Help.reloadSuccessTime),
            labels: [])
        reloadSuccessful.set(to: 1)
        reloadSuccessTime.set(to: configured.timeIntervalSince1970)
    }

    /// A reading of the configuration: whether it was applied, and when.
    func recordReload(successful: Bool, at time: Date) {
        reloadSuccessful.set(to: successful ? 1 : 0)
        if successful { reloadSuccessTime.set(to: time.timeIntervalSince1970) }
    }

    /// A reading of `--web-config-file`. Its series is made on the first call: without a web
    /// config it does not exist.
    func recordWebConfigReload(successful: Bool) {
        registry.makeGauge(descriptor: .reachd("web_config_last_reload_successful", help: Help.webConfigReload))
            .set(to: successful ? 1 : 0)
    }
}

/// The HELP text of each family (one place, so every series of a family shares it).
private enum Help {
    static let buildInfo = "reachd's version and the libmicrohttpd it runs on; always 1."
    static let reloadSuccessful = "1 when the last reading of the configuration was applied, 0 when it was refused."
    static let reloadSuccessTime = "When the configuration was last applied, in seconds since the Unix epoch."
    static let webConfigReload =
        "1 when the last reading of --web-config-file (and the files it names) was applied, 0 when it was refused."
}
