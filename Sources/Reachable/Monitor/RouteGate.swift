package import FoundationEssentials

/// How a probing source joins the document that publishes a batch of netlink changes: when the
/// batch leaves its last known addresses without a usable route out of their egress, that same
/// document already says so (targets `no-route`, connectivity `none`, nameservers `failing`) —
/// one change, one event.
///
/// The monitor asks the kernel `questions()` on the netlink thread (microseconds each, on the
/// netlink source's own request socket), then calls every gate's `judge` **outside its own
/// lock**, nested: each gate takes its source's lock, rewrites its book and hands `publish` the
/// edit of its part of the document while still holding it; inside the last gate the monitor
/// publishes the batch with every edit. So the lock order is always source → monitor (the
/// engine thread records a probe result the same way), and nothing but value edits of the
/// document ever runs under the monitor's lock.
package struct RouteGate: Sendable {
    /// An edit of a source's part of the document: a pure change of values, run under the
    /// monitor's lock.
    package typealias Edit = @Sendable (inout ReachabilityStatus) -> Void

    /// What decides at once: every address the source last resolved or asks, with its egress.
    package var questions: @Sendable () -> [RouteQuestion]
    /// Judges a batch: `verdicts` are the kernel's answers to `questions()`, in their order (which
    /// have no usable route now); `path` is the path the batch publishes. Must call `publish` exactly once, while
    /// holding the source's lock.
    package var judge:
        @Sendable (
            _ verdicts: RouteVerdicts, _ path: NetworkPath, _ now: Date, _ publish: (@escaping Edit) -> Void
        ) -> Void

    package init(
        questions: @escaping @Sendable () -> [RouteQuestion],
        judge: @escaping @Sendable (RouteVerdicts, NetworkPath, Date, (@escaping Edit) -> Void) -> Void
    ) {
        self.questions = questions
        self.judge = judge
    }
}
