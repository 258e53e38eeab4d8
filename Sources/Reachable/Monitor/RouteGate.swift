package import FoundationEssentials

/// How a probing source joins the document that publishes a batch of netlink changes: when the
/// batch leaves its last known addresses without a usable route out of their egress, that same
/// document already says so (targets `no-route`, connectivity `none`, nameservers `failing`) —
/// one change, one event.
///
/// The monitor asks the kernel every gate's `questions()` on the netlink thread (microseconds
/// each, on the netlink source's own request socket), then calls each gate's `judge` in turn,
/// holding no lock of its own: a gate takes its source's lock alone, rewrites its book and returns
/// the edit of its part of the document. The monitor then publishes the batch with every edit, in
/// one update. No probe result is taken while a batch is judged (`NetworkMonitor.isCurrent`), so
/// no result can come between a gate's judgement and the document that carries it.
package struct RouteGate: Sendable {
    /// An edit of a source's part of the document: a pure change of values, run under the
    /// monitor's lock.
    package typealias Edit = @Sendable (inout ReachabilityStatus) -> Void

    /// What decides at once: every address the source last resolved or asks, with its egress.
    package var questions: @Sendable () -> [RouteQuestion]
    /// Judges a batch: `verdicts` are the kernel's answers to `questions()`, in their order (which
    /// have no usable route now); `path` is the path the batch publishes. Returns the edit of the
    /// source's part of the document, or `nil` when the document keeps it as it is.
    package var judge: @Sendable (_ verdicts: RouteVerdicts, _ path: NetworkPath, _ now: Date) -> Edit?

    package init(
        questions: @escaping @Sendable () -> [RouteQuestion],
        judge: @escaping @Sendable (RouteVerdicts, NetworkPath, Date) -> Edit?
    ) {
        self.questions = questions
        self.judge = judge
    }
}
