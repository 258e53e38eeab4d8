import Logging
import Reachable

/// The fields of the log line of a published change (`status changed`), named and typed as in the
/// document: `transport`, `targets`' `name`/`state`/`reason`/`degraded`, `connectivity`'s and
/// `dns`' `state`/`reason`, `cause` (its layer, `none` when it is null) and `causeText` (its
/// words, when there is one: two plain fields, `cause=link`, since a nested one cost more to write
/// with every change than naming the cause itself); a reason that is null there is left out here.
///
/// `targets` lists every target of a document of up to `listedInFull` targets. A fleet's is
/// larger, and a line of all its targets is hundreds of KB and milliseconds of CPU at every change
/// (docs/scale.md) — more than log pipelines take as one line (Docker's splits at 16 KB). There
/// `targets` lists only the targets whose state, reason or `degraded` changed since the document
/// before, or that are new in it (the first `listedInFull` of them, in the document's order), and
/// the line counts the rest: `targetsChanged` (every one, listed or not), `targetCounts` (by state,
/// and `degraded`) and `unreachableReasons` (by reason).
enum StatusChangeLine {
    static let listedInFull = 100

    /// The line's fields for `status`, published after `previous`.
    static func metadata(for status: ReachabilityStatus, after previous: ReachabilityStatus) -> Logger.Metadata {
        let path = status.path
        var connectivity: Logger.Metadata = ["state": .string(status.connectivity.state.rawValue)]
        if let reason = status.connectivity.reason { connectivity["reason"] = .string(reason.rawValue) }
        var dns: Logger.Metadata = ["state": .string(status.dns.state.rawValue)]
        if let reason = status.dns.reason { dns["reason"] = .string(reason.rawValue) }
        var metadata: Logger.Metadata = [
            "sequence": .stringConvertible(status.sequence),
            "changedAt": .string(ReachabilityStatus.timestampStyle.format(status.changedAt)),
            "state": .string(status.state.rawValue),
            "ipv4": .stringConvertible(path.ipv4), "ipv6": .stringConvertible(path.ipv6),
            "transport": .dictionary(
                Dictionary(
                    uniqueKeysWithValues: Transport.allCases.map {
                        ($0.rawValue, .stringConvertible(path.transport.contains($0)))
                    })
            ),
            "isDataMetered": .stringConvertible(path.isDataMetered),
            "connectivity": .dictionary(connectivity),
            "dns": .dictionary(dns),
            "cause": .string(status.cause?.layer.rawValue ?? "none"),
        ]
        if let cause = status.cause { metadata["causeText"] = .string(cause.text) }
        if status.targets.count <= listedInFull {
            metadata["targets"] = .array(status.targets.map(entry))
        } else {
            summarize(status.targets, after: previous.targets, into: &metadata)
        }
        return metadata
    }

    /// `targets` (the changed ones, up to `listedInFull`), `targetsChanged`, `targetCounts` and
    /// `unreachableReasons`.
    private static func summarize(
        _ targets: [TargetStatus], after previous: [TargetStatus], into metadata: inout Logger.Metadata
    ) {
        var listed: [Logger.MetadataValue] = []
        var changed = 0
        var states: [TargetStatus.State: Int] = [:]
        var degraded = 0
        var reasons: [String: Int] = [:]
        let before = NamePairing.oldPlaces(previous, targets, name: \.name)
        for (index, target) in targets.enumerated() {
            states[target.state, default: 0] += 1
            if target.degraded { degraded += 1 }
            if target.state == .unreachable, let reason = target.reason { reasons[reason.rawValue, default: 0] += 1 }
            let old = before[index].map { previous[$0] }
            if old?.state != target.state || old?.reason != target.reason || old?.degraded != target.degraded {
                changed += 1
                if listed.count < listedInFull { listed.append(entry(target)) }
            }
        }
        metadata["targets"] = .array(listed)
        metadata["targetsChanged"] = .stringConvertible(changed)
        var counts: Logger.Metadata = ["degraded": .stringConvertible(degraded)]
        for state in TargetStatus.State.allCases {
            counts[state.rawValue] = .stringConvertible(states[state, default: 0])
        }
        metadata["targetCounts"] = .dictionary(counts)
        metadata["unreachableReasons"] = .dictionary(reasons.mapValues { .stringConvertible($0) })
    }

    /// A target as the line lists it: `name`, `state`, and `reason` and `degraded` when set.
    private static func entry(_ target: TargetStatus) -> Logger.MetadataValue {
        var fields: Logger.Metadata = ["name": .string(target.name), "state": .string(target.state.rawValue)]
        if let reason = target.reason { fields["reason"] = .string(reason.rawValue) }
        if target.degraded { fields["degraded"] = .stringConvertible(true) }
        return .dictionary(fields)
    }
}
