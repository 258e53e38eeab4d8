public import FoundationEssentials
public import Reachable
import Synchronization

/// Everything `/metrics` shows, in Prometheus' text format (0.0.4): the one entry point that is
/// told what changed and writes every series, in one fixed order (`ExpositionWriter`).
///
/// The document `update` applied last is kept (a reference, not a copy); the series that come from
/// it alone are written from it per scrape, and what lasts across documents (a target's
/// transitions, the probes' and queries' histograms) is counted as things happen. A scrape that
/// comes between a document's install and its `update` applies that document itself: `/metrics` is
/// never older than `/status` (see `response`). Every series whose labels are known at start
/// reads 0 until set (a target's with the first document that lists it: every failure reason among
/// them); the series of an interface, a target family or a nameserver that is gone are not
/// written. Each kind of series is kept by a part of its own (`DocumentMetrics`,
/// `InterfaceMetrics`, `TargetMetrics`, `NameserverMetrics`, `NetlinkMetrics`, `ServingMetrics`,
/// `ConfigurationMetrics`).
public final class ServerMetrics: Sendable {
    /// The content type of the text format, as Prometheus asks for it.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    private let configuration: ConfigurationMetrics
    private let targets = TargetMetrics()
    private let nameservers = NameserverMetrics()
    private let netlink = NetlinkMetrics()
    private let serving = ServingMetrics()
    /// The document the series were last set from (`nil`: none yet), held while one is applied:
    /// two documents are never applied at once, nor an older after a newer.
    private let applied = Mutex<ReachabilityStatus?>(nil)

    /// - Parameters:
    ///   - version: reachd's version, a label of `reachd_build_info`.
    ///   - configured: when the configuration was read (at start, the targets with it).
    public init(version: String = "unknown", configured: Date = Date()) {
        configuration = ConfigurationMetrics(version: version, configured: configured)
    }

    // MARK: The document

    /// Sets every value that comes from the document: call with each new one. A document no newer
    /// than the one applied last changes nothing (a scrape may have applied it already).
    func update(_ status: ReachabilityStatus) {
        let replaced = applied.withLock { applied -> ReachabilityStatus? in
            if let applied, status.sequence <= applied.sequence { return nil }
            targets.update(status.targets)
            nameservers.update(status.dns.servers)
            let old = applied
            applied = status
            return old
        }
        // Often the last reference to a large document's entries: released out of the lock, so a
        // scrape does not wait for it.
        _ = replaced
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
    /// `reachd_config_last_reload_successful` says whether the last one was applied (1 from the
    /// start: the command line reachd runs with was), `…_success_timestamp_seconds` when the last
    /// good one was (Prometheus' and blackbox_exporter's names and meaning). Both exist from the
    /// start (`init`).
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

    /// The text format of every series: the configuration's, the document's, the interfaces',
    /// the nameservers', the targets', the netlink source's and the server's own, in that order;
    /// `sseClients` is the number of open streams right now.
    func render(sseClients: Int) -> [UInt8] {
        let status = applied.withLock { $0 }
        var out = ExpositionWriter(capacity: 8192)
        configuration.write(into: &out)
        DocumentMetrics.write(status, into: &out)
        InterfaceMetrics.write(status?.path.interfaces ?? [], into: &out)
        nameservers.write(status?.dns.servers ?? [], into: &out)
        targets.write(into: &out)
        netlink.write(into: &out)
        serving.write(sseClients: sseClients, into: &out)
        return out.bytes
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
