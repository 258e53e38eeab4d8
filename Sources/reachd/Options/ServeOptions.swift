import ArgumentParser
import FoundationEssentials
import Logging
import Probes
import Reachable
import ReachableServer

/// Every option of serving, shared by `reachd` and `reachd serve`, so `reachd --help` lists them:
/// the server's here, the rest in `MonitoringOptions` (shared with `reachd wait`). Each is
/// declared in `Settings`; here it only gets its place in the command line.
struct ServeOptions: ParsableArguments {
    @OptionGroup var address: ServerAddress

    @Option(Settings.heartbeat) var heartbeat: Double?
    @Option(Settings.readyWhen) var readyWhen: [ReadinessCondition]?
    @Option(Settings.allowOrigin) var allowOrigin: CrossOriginPolicy?
    @Option(Settings.allowedHosts) var allowedHosts: HostPolicy?
    @Option(Settings.maxConnections) var maxConnections: Int?
    @Option(Settings.maxConnectionsPerIP) var maxConnectionsPerIP: Int?
    @Option(Settings.connectionTimeout) var connectionTimeout: Int?
    @Option(Settings.connectionMemory) var connectionMemory: Int?
    @Option(Settings.shutdownTimeout) var shutdownTimeout: Double?
    @Option(Settings.threads) var threads: Int?
    @Option(Settings.history) var history: Int?
    @Option(Settings.webConfigFile) var webConfigFile: String?
    /// The monitor's, the probes' and the log's options, which `reachd wait` takes too.
    @OptionGroup var monitoring: MonitoringOptions

    /// The server's settings from the flags, the environment and the defaults, validated.
    ///
    /// - Parameter probes: what is probed (`probeConfiguration()`): each `target:NAME` of
    ///   `--ready-when` must name one of its targets, `online` needs its connectivity check and
    ///   `dns` its nameserver check.
    func serverConfiguration(probes: ProbeConfiguration) throws -> ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.host = try address.serverHost()
        configuration.port = try address.resolvedPort()
        configuration.heartbeat = try Settings.heartbeat.resolve(heartbeat)
        configuration.readiness = try readinessConditions(probes: probes)
        configuration.allowOrigin = try Settings.allowOrigin.resolve(allowOrigin)
        configuration.allowedHosts = try Settings.allowedHosts.resolve(allowedHosts)
        configuration.maxConnections = try Settings.maxConnections.resolve(maxConnections)
        configuration.maxConnectionsPerIP = try Settings.maxConnectionsPerIP.resolve(maxConnectionsPerIP)
        configuration.connectionTimeout = try Settings.connectionTimeout.resolve(connectionTimeout)
        configuration.connectionMemoryLimit = try Settings.connectionMemory.resolve(connectionMemory)
        configuration.shutdownTimeout = try Settings.shutdownTimeout.resolve(shutdownTimeout)
        configuration.threads = try Settings.threads.resolve(threads)
        configuration.history = try Settings.history.resolve(history)
        configuration.security = try webSecurity()
        return configuration
    }

    /// `--web-config-file` read with every file it names; a bad one is refused now, named as
    /// every refused option is.
    private func webSecurity() throws -> WebSecurity? {
        let path = try Settings.webConfigFile.resolve(webConfigFile)
        guard !path.isEmpty else { return nil }
        do {
            return try WebSecurity(path: path)
        } catch {
            let source =
                webConfigFile != nil
                ? "--\(Settings.webConfigFile.flag)"
                : "\(Settings.webConfigFile.environment)=\(path) is invalid for --\(Settings.webConfigFile.flag)"
            throw ValidationError("\(source): \(error)")
        }
    }

    /// `--ready-when`, each condition one that can hold: a refused one would keep `/readyz` failing
    /// for good, which an operator learns better now than from a pod that never turns ready.
    private func readinessConditions(probes: ProbeConfiguration) throws -> [ReadinessCondition] {
        let conditions = try Settings.readyWhen.resolve(readyWhen)
        try probes.refuseUnsatisfiable(conditions, source: Settings.readyWhen.source(flagGiven: readyWhen != nil))
        return conditions
    }
}

// The monitor's and the probes' configurations, from `MonitoringOptions` (which serving and
// `reachd wait` share).
extension MonitoringOptions {
    /// What the probes do, from the flags, the environment and the defaults, validated: every
    /// malformed spec is refused here, before anything is served.
    func probeConfiguration() throws -> ProbeConfiguration {
        var configuration = ProbeConfiguration()
        configuration.targets = try resolvedTargets()
        if let file = try resolvedTargetsFile(after: configuration.targets) {
            configuration.targetsFile = file
            do {
                configuration.targets = try file.read()
            } catch {
                // Named as every refused option is: the flag, or the variable with its value.
                let source =
                    targetsFile != nil
                    ? "--\(Settings.targetsFile.flag)"
                    : "\(Settings.targetsFile.environment)=\(file.path) is invalid for --\(Settings.targetsFile.flag)"
                throw ValidationError("\(source): \(error)")
            }
        }
        configuration.targetInterval = .seconds(try Settings.targetInterval.resolve(targetInterval))
        configuration.targetTimeout = .seconds(try Settings.targetTimeout.resolve(targetTimeout))
        configuration.targetFailures = try Settings.targetFailures.resolve(targetFailures)
        configuration.targetSuccesses = try Settings.targetSuccesses.resolve(targetSuccesses)
        configuration.icmpCount = try Settings.icmpCount.resolve(icmpCount)
        configuration.qualityWindow = try Settings.qualityWindow.resolve(qualityWindow)
        configuration.maxLoss = try Settings.maxLoss.resolve(maxLoss)
        let maxRTT = try Settings.maxRTT.resolve(maxRTT)
        configuration.maxRoundTrip = maxRTT > 0 ? .seconds(maxRTT) : nil
        configuration.connectivity = try connectivitySpec()
        configuration.connectivityInterval = .seconds(try Settings.connectivityInterval.resolve(connectivityInterval))
        configuration.connectivityTimeout = .seconds(try Settings.connectivityTimeout.resolve(connectivityTimeout))
        configuration.perUplink = try Settings.perUplink.resolveSwitch(perUplink)
        if configuration.perUplink, configuration.connectivity == nil {
            throw ValidationError(
                "\(Settings.perUplink.source(flagGiven: perUplink)) needs --connectivity-url (env: REACHD_CONNECTIVITY_URL): "
                    + "each uplink is checked against that URL")
        }
        configuration.proxies = try proxyChoice(for: configuration)
        let dnsName = try Settings.dnsCheck.resolve(dnsCheck)
        configuration.dnsCheck = dnsName.isEmpty ? nil : dnsName
        configuration.dnsInterval = .seconds(try Settings.dnsInterval.resolve(dnsInterval))
        configuration.dnsTimeout = .seconds(try Settings.dnsTimeout.resolve(dnsTimeout))
        configuration.dnsFailures = try Settings.dnsFailures.resolve(dnsFailures)
        return configuration
    }

    /// The `--target` flags if any, else `REACHD_TARGETS`. Each flag was parsed on its own; a name
    /// used by two of them is refused here (the variable's list was checked whole).
    private func resolvedTargets() throws -> [TargetSpec] {
        guard !targets.isEmpty else { return try Settings.targets.resolve(nil) }
        do {
            // The specs again, exactly as given: the URL keeps its text.
            return try TargetSpec.parseList(targets.map(\.text))
        } catch {
            throw ValidationError("--\(Settings.targets.flag): \(error)")
        }
    }

    /// `--targets-file`, its targets following `flagTargets`; `nil` without one.
    private func resolvedTargetsFile(after flagTargets: [TargetSpec]) throws -> TargetsFile? {
        let path = try Settings.targetsFile.resolve(targetsFile)
        return path.isEmpty ? nil : TargetsFile(path: path, flagTargets: flagTargets)
    }

    /// `--proxy` (or `REACHD_PROXY`), else curl's variables. A refusal names the option or the
    /// variable and never quotes the URL: it may hold a password. The variables are read only when
    /// some check could go through a proxy: a reachd without one starts whatever they say.
    private func proxyChoice(for configuration: ProbeConfiguration) throws -> ProxyChoice {
        let text = try Settings.proxy.resolve(proxy)
        let mayUseProxy =
            configuration.connectivity != nil || configuration.targetsFile != nil
            || configuration.targets.contains { $0.url.kind.takesProxy }
        if text.isEmpty, !mayUseProxy { return .never }
        do {
            return try ProxyChoice.resolve(
                option: text.isEmpty ? nil : text, environment: ProcessInfo.processInfo.environment)
        } catch {
            // As every refused option reads (`Setting.value`), the credentials written `***`.
            guard let variable = error.source else {
                let flag = "--\(Settings.proxy.flag)"
                throw ValidationError(
                    proxy != nil
                        ? "\(flag) \(error.shownText): \(error.problem)"
                        : "\(Settings.proxy.environment)=\(error.shownText) is invalid for \(flag): \(error.problem)")
            }
            throw ValidationError(
                "\(variable)=\(error.shownText) is invalid: \(error.problem) (--proxy none ignores the environment's proxy)"
            )
        }
    }

    /// `nil` (connectivity `disabled`) without a URL; a response without one is refused, since
    /// nothing would ever compare it.
    private func connectivitySpec() throws -> ConnectivitySpec? {
        let url = try Settings.connectivityURL.resolve(connectivityURL)
        let response = try Settings.connectivityResponse.resolve(connectivityResponse)
        guard !url.isEmpty else {
            guard response.isEmpty else {
                let source = Settings.connectivityResponse.source(flagGiven: connectivityResponse != nil)
                throw ValidationError(
                    "\(source) needs --connectivity-url (env: REACHD_CONNECTIVITY_URL): without a check nothing compares it"
                )
            }
            return nil
        }
        do {
            return try ConnectivitySpec.parse(url: url, response: response)
        } catch {
            // Both were validated on their own; this names the pair should that ever change.
            throw ValidationError("--connectivity-url, --connectivity-response: \(error)")
        }
    }

    /// The monitor's settings, likewise.
    func monitorConfiguration() throws -> MonitorConfiguration {
        var configuration = MonitorConfiguration()
        configuration.ipv4Destination = try Settings.ipv4Destination.resolve(ipv4Destination)
        configuration.ipv6Destination = try Settings.ipv6Destination.resolve(ipv6Destination)
        configuration.meteredInterfacePatterns = try Settings.meteredInterfaces.resolve(meteredInterfaces)
        return configuration
    }
}
