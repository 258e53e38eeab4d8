public import FoundationEssentials
import Prometheus
public import Reachable
import Synchronization

/// Everything `/metrics` shows, in Prometheus' text format (0.0.4), kept in swift-prometheus
/// registries (one, and one per target: `TargetMetrics`): the one entry point that makes every
/// series and is told what changed.
///
/// Values that come from the status document are set when the document changes (`update`), and
/// the netlink counters when a batch or the document changes (`recordSource`) — not per scrape:
/// a scrape costs one rendering and waits for nothing but the registry's own short lock, unless
/// it comes between a document's install and its `update` (then it applies that document itself:
/// `/metrics` is never older than `/status`, see `response`). Every series whose labels are known at
/// start, at 0 (a target's series with the first document that lists it: every failure reason
/// among them); the series of an interface, a target family or a nameserver that is gone are
/// removed. Each kind of series is kept by a part of its own (`DocumentMetrics`,
/// `InterfaceMetrics`, `TargetMetrics`, `NameserverMetrics`, `NetlinkMetrics`, `ServingMetrics`,
/// `ConfigurationMetrics`).
public final class ServerMetrics: Sendable {
    /// The content type of the text format, as Prometheus asks for it.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// The registry the text is rendered from.
    private let registry = PrometheusCollectorRegistry()
    private let configuration: ConfigurationMetrics
    private let document: DocumentMetrics
    private let interfaces: InterfaceMetrics
    private let targets: TargetMetrics
    private let nameservers: NameserverMetrics
    private let netlink: NetlinkMetrics
    private let serving: ServingMetrics
    /// The sequence of the document the series were last set from (`nil`: none yet), held while
    /// one is applied: two documents are never applied at once, nor an older after a newer.
    private let appliedSequence = Mutex<UInt64?>(nil)

    /// - Parameters:
    ///   - version: reachd's version, a label of `reachd_build_info`.
    ///   - configured: when the configuration was read (at start, the targets with it).
    public init(version: String = "unknown", configured: Date = Date()) {
        configuration = ConfigurationMetrics(registry: registry, version: version, configured: configured)
        document = DocumentMetrics(registry: registry)
        interfaces = InterfaceMetrics(registry: registry)
        targets = TargetMetrics()
        nameservers = NameserverMetrics(registry: registry)
        netlink = NetlinkMetrics(registry: registry)
        serving = ServingMetrics(registry: registry)
    }

    // MARK: The document

    /// Sets every value that comes from the document: call with each new one. A document no newer
    /// than the one applied last changes nothing (a scrape may have applied it already).
    func update(_ status: ReachabilityStatus) {
        appliedSequence.withLock { applied in
            if let applied, status.sequence <= applied { return }
            document.update(status)
            interfaces.update(status.path.interfaces)
            targets.update(status.targets)
            nameservers.update(status.dns.servers)
            applied = status.sequence
        }
    }

    // MARK: Other sources

    /// Adds what the netlink source did since the last call: call after every batch and change.
    func recordSource(_ statistics: SourceStatistics) {
        netlink.record(statistics)
    }

    /// One finished probe of one family of a target: its duration, name resolution included, and
    /// why it failed (`nil`: it succeeded) — counted even while a threshold keeps the state.
    public func recordProbe(target: String, duration: Duration, failure: ProbeFailureReason?) {
        targets.recordProbe(target: target, duration: duration, failure: failure)
    }

    /// What one probe of one family of a target measured of the path (`TargetMetrics.recordQuality`).
    public func recordQuality(
        target: String, family: AddressFamily, roundTrips: [Duration], echoesSent: Int, echoesAnswered: Int,
        pathMTU: Int?
    ) {
        targets.recordQuality(
            target: target, family: family, roundTrips: roundTrips, echoesSent: echoesSent,
            echoesAnswered: echoesAnswered, pathMTU: pathMTU)
    }

    /// One finished query to a nameserver (`--dns-check`), answered or not.
    public func recordNameserverQuery(server: String, duration: Duration) {
        nameservers.recordQuery(server: server, duration: duration)
    }

    /// A reading of the configuration (the command line at start, `--targets-file` on a reload):
    /// `reachd_config_last_reload_successful` says whether the last one was applied (0 until a
    /// good one is read), `…_success_timestamp_seconds` when the last good one was (Prometheus'
    /// and blackbox_exporter's names and meaning). Both exist from the start (`init`).
    public func recordConfigReload(successful: Bool, at time: Date) {
        configuration.recordReload(successful: successful, at: time)
    }

    /// `reachd_web_config_last_reload_successful`: whether the last reading of
    /// `--web-config-file` was applied. Made on the first call: without a web config the series
    /// does not exist.
    public func recordWebConfigReload(successful: Bool) {
        configuration.recordWebConfigReload(successful: successful)
    }

    // MARK: The server's own

    /// `reachd_changes_kept`: how many changes `/changes` holds now.
    func recordChangesKept(_ count: Int) {
        serving.setChangesKept(count)
    }

    /// `count` status events handed to `/events` clients.
    func eventsSent(_ count: Int) {
        serving.countEventsSent(count)
    }

    /// One answered request.
    func countRequest(_ route: Route, status: Int) {
        serving.countRequest(RouteLabel(route), status: status)
    }

    /// A CORS preflight, which never reaches routing.
    func countPreflight(status: Int) {
        serving.countRequest(.preflight, status: status)
    }

    // MARK: Rendering

    /// The text format of every series, families by name and series by labels (`ExpositionOrder`);
    /// `sseClients` is the number of open streams right now.
    func render(sseClients clients: Int) -> [UInt8] {
        serving.setStreamsOpen(clients)
        var buffer: [UInt8] = []
        buffer.reserveCapacity(8192)
        registry.emit(into: &buffer)
        targets.emit(into: &buffer)
        return ExpositionOrder.ordered(buffer)
    }

    /// The response to `GET /metrics`, at least as new as `current` — the document `/status`
    /// serves now. The server installs a document for `/status` and the streams first and sets
    /// the series after: setting them first would hold a link-down's event back (docs/scale.md).
    /// A scrape in between applies the document here, so whoever has seen a document at `/status`
    /// or `/events` reads metrics at least that new; when they are, this costs a comparison.
    func response(sseClients: Int, current: ReachabilityStatus) -> HTTPResponse {
        update(current)
        return HTTPResponse(
            status: 200,
            headers: [HTTPField("Content-Type", Self.contentType), HTTPField("Cache-Control", "no-store")],
            body: render(sseClients: sseClients))
    }
}
