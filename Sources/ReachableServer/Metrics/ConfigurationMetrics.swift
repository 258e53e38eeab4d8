import FoundationEssentials
import Synchronization

/// Which reachd runs and what configuration it applied: `reachd_build_info`, the last reading of
/// the configuration (the command line at start, `--targets-file` on a reload) and of
/// `--web-config-file` — what an alert on a refused reload reads.
final class ConfigurationMetrics: Sendable {
    private struct Readings {
        var reloadSuccessful = true
        var lastSuccess: Date
        /// `nil` until `--web-config-file` is first read: without a web config the series does
        /// not exist.
        var webConfigSuccessful: Bool?
    }

    private let version: String
    private let readings: Mutex<Readings>

    /// - Parameters:
    ///   - version: reachd's version, a label of `reachd_build_info`.
    ///   - configured: when the configuration was read (at start, the targets with it).
    init(version: String, configured: Date) {
        self.version = version
        readings = Mutex(Readings(lastSuccess: configured))
    }

    /// A reading of the configuration: whether it was applied, and when.
    func recordReload(successful: Bool, at time: Date) {
        readings.withLock { readings in
            readings.reloadSuccessful = successful
            if successful { readings.lastSuccess = time }
        }
    }

    /// A reading of `--web-config-file`.
    func recordWebConfigReload(successful: Bool) {
        readings.withLock { $0.webConfigSuccessful = successful }
    }

    func write(into out: inout ExpositionWriter) {
        let readings = readings.withLock { $0 }
        out.family("build_info", .gauge, Help.buildInfo)
        out.gauge("build_info", ("version", version), ("libmicrohttpd", MicroHTTPDVersion.libmicrohttpd), value: 1)
        out.family("config_last_reload_successful", .gauge, Help.reloadSuccessful)
        out.flag("config_last_reload_successful", holds: readings.reloadSuccessful)
        out.family("config_last_reload_success_timestamp_seconds", .gauge, Help.reloadSuccessTime)
        out.gauge("config_last_reload_success_timestamp_seconds", value: readings.lastSuccess.timeIntervalSince1970)
        if let successful = readings.webConfigSuccessful {
            out.family("web_config_last_reload_successful", .gauge, Help.webConfigReload)
            out.flag("web_config_last_reload_successful", holds: successful)
        }
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
