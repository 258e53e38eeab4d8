/// One kind of probe on the shared resolve → route → probe-each-family pipeline
/// (`ProbePipeline`): which URLs it takes and how it probes one routed address of one family.
/// Everything else — names, families, routes, thresholds, the document, the metrics per target
/// — is the pipeline's and the same for every kind.
///
/// A new kind is a folder under `Kinds/`: a type conforming to this protocol (with its
/// `TargetURL.Scheme` constants) and — if it needs sockets of its own — an `EngineDriver` it
/// submits its probes to (`ProbeEngine.probe(with:)`); then one line in `ProbeKinds.all`.
public protocol ProbeKind: Sendable {
    /// The URL schemes it takes.
    static var schemes: [TargetURL.Scheme] { get }

    /// The port and request path a URL of this kind keeps, from the port written (if any) and
    /// what follows the authority; or why the URL cannot be probed so.
    static func parts(
        _ scheme: TargetURL.Scheme, port: UInt16?, remainder: String
    ) -> Result<(port: UInt16?, path: String), SpecError.Problem>

    /// A last check of the whole URL (a library's own parser); `nil` when it is accepted.
    static func refusal(of url: TargetURL) -> SpecError.Problem?

    /// Why this host cannot probe this kind at all, asked once at start when a target of it is
    /// configured (reachd then refuses to start, saying so); `nil` when it can.
    static func unavailableHere() -> String?

    /// Whether an HTTP proxy can carry its probes (`ProxyChoice`): then the probe resolves, routes
    /// and connects to the proxy, and the kind's `probe` finds it in `ProbeJob.proxy`.
    static var takesProxy: Bool { get }

    /// Probes `job` — one routed address of one family — from the engine thread; `completion`
    /// is called once, there, with the outcome and the contract's reason for a failure.
    ///
    /// - Returns: `false` when the engine is stopped; the completion is then never called.
    static func probe(
        _ job: ProbeJob, on engine: ProbeEngine, completion: @escaping @Sendable (ProbeOutcome) -> Void
    ) -> Bool
}

extension ProbeKind {
    public static func refusal(of url: TargetURL) -> SpecError.Problem? { nil }
    public static func unavailableHere() -> String? { nil }
    public static var takesProxy: Bool { false }
}

/// Every kind reachd probes: registering a kind is one line here.
public enum ProbeKinds {
    public static let all: [any ProbeKind.Type] = [
        HostProbe.self, TCPProbe.self, WebProbe.self, ICMPProbe.self, DNSProbe.self,
    ]

    /// The kind that takes `scheme`.
    static func kind(for scheme: TargetURL.Scheme) -> (any ProbeKind.Type)? {
        all.first { $0.schemes.contains(scheme) }
    }

    /// Every scheme of every kind: what `--target` takes.
    public static var schemes: Set<TargetURL.Scheme> {
        var schemes = Set<TargetURL.Scheme>()
        for kind in all { schemes.formUnion(kind.schemes) }
        return schemes
    }

    /// Every scheme in registration order, for a refusal: `host://, tcp://, http:// or https://`.
    static var schemeList: String {
        let written = all.flatMap { kind in kind.schemes.map { "\($0.rawValue)://" } }
        return written.dropLast().joined(separator: ", ") + " or " + written.last!
    }
}
