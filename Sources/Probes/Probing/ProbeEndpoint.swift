import Reachable

/// What a probe resolves, routes and connects to: the URL's own host, or the proxy that carries
/// the request (the target's name is then the proxy's to resolve). The pipeline asks nothing else
/// of a proxy: which one applies is `ProxyChoice`'s, speaking to it is the kind's.
struct ProbeEndpoint: Sendable {
    /// A name or an IP literal without brackets.
    let host: String
    /// Set when `host` is an IP literal: it needs no DNS.
    let literal: IPAddress?
    /// `proxy 198.18.0.1:3128`: said before the detail of a failure that concerns the proxy;
    /// `nil` when the endpoint is the URL's host.
    let label: String?

    init(_ url: TargetURL, proxy: ProxyURL?) {
        host = proxy?.host ?? url.host
        literal = proxy == nil ? url.literal : proxy?.literal
        label = proxy.map { "proxy \($0.authority)" }
    }

    /// The failures that concern whatever the probe connects to: through a proxy, the proxy's.
    private static let connecting: Set<ProbeFailureReason> = [.dns, .noRoute, .timeout, .refused, .hostUnreachable]

    /// `detail` with the label before it when `reason` concerns the endpoint.
    func detail(_ detail: String?, for reason: ProbeFailureReason?) -> String? {
        guard let label, let reason, Self.connecting.contains(reason) else { return detail }
        return detail.map { "\(label): \($0)" } ?? label
    }

    /// Every detail of `result` that concerns the endpoint, labelled (only through a proxy).
    func labelled(_ result: ProbePipeline.Result) -> ProbePipeline.Result {
        guard label != nil else { return result }
        var result = result
        result.unresolvedDetail = detail(result.unresolvedDetail, for: result.unresolved)
        for family in result.lookupDetails.keys {
            result.lookupDetails[family] = detail(result.lookupDetails[family], for: .dns)
        }
        for index in result.families.indices {
            let outcome = result.families[index].outcome
            result.families[index].outcome.detail = detail(outcome.detail, for: outcome.failure)
        }
        return result
    }
}
