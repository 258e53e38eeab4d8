public import Reachable

/// Everything outbound, started only when something is configured: one engine thread (libcurl
/// and c-ares), a route checker with its own netlink request socket, the targets and the
/// connectivity check, and a watch on resolv.conf that re-runs them when it changes.
/// With nothing configured none of it exists: reachd sends nothing and has no probe thread.
public final class ProbeService: Sendable {
    private let engine: ProbeEngine
    public let targets: TargetProber?
    public let connectivity: ConnectivityChecker?

    /// Starts probing at once. Call on a thread in the monitor's network namespace (the route
    /// checker's socket is opened in the caller's).
    ///
    /// - Parameter onProbe: every finished target probe's duration (see `TargetProber`).
    /// - Returns: `nil` when nothing is configured.
    public static func start(
        _ configuration: ProbeConfiguration, monitor: NetworkMonitor, trustedCertificates: String? = nil,
        onProbe: (@Sendable (_ target: String, _ duration: Duration) -> Void)? = nil
    ) throws -> ProbeService? {
        guard !configuration.isEmpty else { return nil }
        let engine = try ProbeEngine(resolver: configuration.resolver, trustedCertificates: trustedCertificates)
        do {
            let routes = try RouteChecker(monitor: monitor)
            return ProbeService(configuration, engine: engine, routes: routes, monitor: monitor, onProbe: onProbe)
        } catch {
            engine.stop()
            throw error
        }
    }

    private init(
        _ configuration: ProbeConfiguration, engine: ProbeEngine, routes: RouteChecker, monitor: NetworkMonitor,
        onProbe: (@Sendable (String, Duration) -> Void)?
    ) {
        self.engine = engine
        targets =
            configuration.targets.isEmpty
            ? nil
            : TargetProber(
                configuration: configuration, engine: engine, routes: routes, monitor: monitor, onProbe: onProbe)
        connectivity = configuration.connectivity.map {
            ConnectivityChecker(
                spec: $0, configuration: configuration, engine: engine, routes: routes, monitor: monitor)
        }
        engine.watch(path: configuration.resolver.resolvConfPath) { [targets, connectivity] in
            targets?.resolverChanged()
            connectivity?.resolverChanged()
        }
        targets?.start()
        connectivity?.start()
    }

    /// What the engine has done (for tests and metrics).
    public var statistics: EngineStatistics { engine.statistics }

    /// Stops every probe and the engine thread. Idempotent.
    public func stop() {
        engine.stop()
    }
}
