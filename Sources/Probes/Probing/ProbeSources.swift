public import Reachable

/// Everything outbound, made only when something is configured: one engine thread (libcurl and
/// c-ares), a route checker with its own netlink request socket, the targets, the connectivity
/// check and the nameserver check, and a watch on resolv.conf that re-runs them when it changes.
/// With nothing configured none of it exists: reachd sends nothing and has no probe thread.
public final class ProbeSources: Sendable {
    private let engine: ProbeEngine
    private let targets: TargetProber?
    private let connectivity: ConnectivityChecker?
    /// `--per-uplink`: the check through each uplink.
    private let uplinks: UplinkChecker?
    private let nameservers: NameserverChecker?
    /// `nil` without `--targets-file`.
    private let reloader: TargetsReloader?

    /// Makes the engine and the checks; nothing is sent before `start()`. Call on a thread in the
    /// monitor's network namespace (the route checker's socket is opened in the caller's).
    ///
    /// - Parameters:
    ///   - events: told every finished probe and query (for metrics).
    ///   - targetsReloaded: told every reading of `--targets-file` after start (on the engine
    ///     thread; it must return at once): applied, or why not.
    /// - Returns: `nil` when nothing is configured.
    public static func make(
        _ configuration: ProbeConfiguration, monitor: NetworkMonitor, trustedCertificates: String? = nil,
        events: ProbeEvents = ProbeEvents(), targetsReloaded: @escaping @Sendable (TargetsReload) -> Void = { _ in }
    ) throws -> ProbeSources? {
        guard !configuration.isEmpty else { return nil }
        for kind in configuration.kinds {
            if let problem = kind.unavailableHere() { throw ProbeEngineError(problem) }
        }
        let engine = try ProbeEngine(
            resolver: configuration.resolver, trustedCertificates: trustedCertificates,
            echoCount: configuration.icmpCount,
            resolverProblem: events.resolverProblem,
            // The probes' results of one turn are one document (NetworkMonitor.update(ifEpoch:deferred:)).
            turnEnded: { [monitor] in monitor.publishDeferred() })
        do {
            let routes = try RouteChecker(monitor: monitor)
            return ProbeSources(
                configuration, engine: engine, routes: routes, monitor: monitor, events: events,
                targetsReloaded: targetsReloaded)
        } catch {
            engine.stop()
            throw error
        }
    }

    private init(
        _ configuration: ProbeConfiguration, engine: ProbeEngine, routes: RouteChecker, monitor: NetworkMonitor,
        events: ProbeEvents, targetsReloaded: @escaping @Sendable (TargetsReload) -> Void
    ) {
        self.engine = engine
        let rechecks = StallRechecks()
        // With a targets file the prober exists even while it lists none: a reload may add some.
        let targets =
            configuration.targets.isEmpty && configuration.targetsFile == nil
            ? nil
            : TargetProber(
                configuration: configuration, engine: engine, routes: routes, monitor: monitor, events: events,
                startedFailing: { rechecks.startedFailing(uplinks: $0) })
        self.targets = targets
        if let file = configuration.targetsFile, let targets {
            reloader = TargetsReloader(file: file, prober: targets, engine: engine, report: targetsReloaded)
        } else {
            reloader = nil
        }
        connectivity = configuration.connectivity.map {
            ConnectivityChecker(
                spec: $0, configuration: configuration, engine: engine, routes: routes, monitor: monitor)
        }
        uplinks =
            configuration.perUplink
            ? configuration.connectivity.map {
                UplinkChecker(spec: $0, configuration: configuration, engine: engine, routes: routes, monitor: monitor)
            } : nil
        nameservers = configuration.dnsCheck.map {
            NameserverChecker(
                name: $0, configuration: configuration, engine: engine, routes: routes, monitor: monitor,
                events: events, startedFailing: { rechecks.startedFailing() })
        }
        rechecks.connect(connectivity: connectivity, uplinks: uplinks)
    }

    /// Probes now, then on every network change, resolv.conf change and interval.
    public func start() {
        engine.onResolverConfigurationChange { [targets, connectivity, uplinks, nameservers] in
            targets?.resolverChanged()
            connectivity?.resolverChanged()
            uplinks?.resolverChanged()
            nameservers?.resolverChanged()
        }
        targets?.start()
        reloader?.start()
        connectivity?.start()
        uplinks?.start()
        nameservers?.start()
    }

    /// Reads `--targets-file` again now (SIGHUP); the outcome goes to `targetsReloaded`.
    ///
    /// - Returns: `false` without a targets file: there is nothing to read.
    public func reloadTargets() -> Bool {
        guard let reloader else { return false }
        reloader.reloadNow()
        return true
    }

    /// What the engine has done (for tests).
    public var statistics: EngineStatistics { engine.statistics }

    /// Stops every probe and the engine thread. Idempotent.
    public func stop() {
        engine.stop()
    }
}
