/// Prometheus' text format (0.0.4), written in the order it is called. `/metrics` keeps one fixed
/// order — families as `ServerMetrics.render` calls its parts, the series of a family in its
/// subjects' order (the document's, or first appearance: `KeyedSeries`) — so two scrapes of the
/// same values are the same text (people diff them) and nothing is sorted per scrape. A family's
/// `# HELP` and `# TYPE` come with its first sample: a family without any is not shown. Every
/// name is `reachd_…`.
struct ExpositionWriter {
    typealias Label = (name: String, value: String)

    enum Kind: String {
        case counter, gauge, histogram
    }

    private(set) var bytes: [UInt8] = []
    private var pendingHead: (name: String, kind: Kind, help: String)?

    init(capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    /// The family the next samples belong to.
    mutating func family(_ name: String, _ kind: Kind, _ help: String) {
        pendingHead = (name, kind, help)
    }

    /// `reachd_NAME{A="…",B="…",C="…"} VALUE`, the labels that are given in that order.
    mutating func sample(
        _ name: String, suffix: String = "", _ a: Label? = nil, _ b: Label? = nil, _ c: Label? = nil,
        value: String
    ) {
        if let head = pendingHead {
            pendingHead = nil
            append("# HELP reachd_\(head.name) \(head.help)\n# TYPE reachd_\(head.name) \(head.kind.rawValue)\n")
        }
        append("reachd_")
        append(name)
        append(suffix)
        var separator = UInt8(ascii: "{")
        appendLabel(a, after: &separator)
        appendLabel(b, after: &separator)
        appendLabel(c, after: &separator)
        if separator == UInt8(ascii: ",") { bytes.append(UInt8(ascii: "}")) }
        bytes.append(UInt8(ascii: " "))
        append(value)
        bytes.append(UInt8(ascii: "\n"))
    }

    /// A gauge's sample: its value as a `Double` writes it (`1.0`, `1763700000.125`).
    mutating func gauge(_ name: String, _ a: Label? = nil, _ b: Label? = nil, _ c: Label? = nil, value: Double) {
        sample(name, a, b, c, value: value.description)
    }

    /// A gauge that is 1 while `holds`, else 0.
    mutating func flag(_ name: String, _ a: Label? = nil, _ b: Label? = nil, _ c: Label? = nil, holds: Bool) {
        sample(name, a, b, c, value: holds ? "1.0" : "0.0")
    }

    /// A counter's sample.
    mutating func counter(
        _ name: String, _ a: Label? = nil, _ b: Label? = nil, _ c: Label? = nil, count: some BinaryInteger
    ) {
        sample(name, a, b, c, value: String(count))
    }

    /// A histogram's cumulative buckets (`le` of each of `bounds`, then `+Inf`), `_sum` and `_count`.
    mutating func histogram<let bucketCount: Int>(
        _ name: String, _ a: Label? = nil, _ b: Label? = nil, counts: DurationCounts<bucketCount>,
        bounds: [String]
    ) {
        for (bound, count) in zip(bounds, counts.cumulative) {
            sample(name, suffix: "_bucket", a, b, ("le", bound), value: String(count))
        }
        sample(name, suffix: "_bucket", a, b, ("le", "+Inf"), value: String(counts.count))
        sample(name, suffix: "_sum", a, b, value: counts.sum.inSeconds)
        sample(name, suffix: "_count", a, b, value: String(counts.count))
    }

    private mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// `NAME="VALUE"` after `separator` (`{` for the first label, then `,`).
    private mutating func appendLabel(_ label: Label?, after separator: inout UInt8) {
        guard let label else { return }
        bytes.append(separator)
        separator = UInt8(ascii: ",")
        append(label.name)
        append("=\"")
        appendEscaped(label.value)
        bytes.append(UInt8(ascii: "\""))
    }

    /// A label value with `\`, `"` and line feeds escaped, as the format asks.
    private mutating func appendEscaped(_ value: String) {
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\\"), UInt8(ascii: "\""): bytes += [UInt8(ascii: "\\"), byte]
            case UInt8(ascii: "\n"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            default: bytes.append(byte)
            }
        }
    }
}

extension Duration {
    /// Seconds in decimal, to the nanosecond, as the text format writes them (`0.005`, `1.0`).
    var inSeconds: String {
        let (seconds, attoseconds) = components
        var fraction = String(attoseconds / 1_000_000_000)
        fraction = String(repeating: "0", count: 9 - fraction.count) + fraction
        while fraction.count > 1, fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(seconds).\(fraction)"
    }
}
