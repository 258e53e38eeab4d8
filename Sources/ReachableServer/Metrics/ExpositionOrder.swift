/// Puts the text format in one fixed order: families by name, the series of a family by their
/// labels. swift-prometheus writes its families and series in the order of its dictionaries,
/// which changes from process to process; people diff two scrapes (issue 6), and a diff of the
/// same values should be empty.
enum ExpositionOrder {
    private struct Family {
        var name: [UInt8]
        /// `# HELP` and `# TYPE`.
        var head: [ArraySlice<UInt8>] = []
        /// One series each: one line, or a histogram's buckets, `_sum` and `_count` together, so
        /// the buckets keep their order.
        var series: [[ArraySlice<UInt8>]] = []
        var isHistogram = false
    }

    static func ordered(_ text: [UInt8]) -> [UInt8] {
        var families: [Family] = []
        var open: [ArraySlice<UInt8>] = []
        for line in text.split(separator: UInt8(ascii: "\n")) {
            if line.starts(with: "# ".utf8) {
                let name = Array(line.split(separator: UInt8(ascii: " "), maxSplits: 3).dropFirst(2).first ?? [])
                if families.last?.name != name || !(families.last?.series.isEmpty ?? true) {
                    families.append(Family(name: name))
                }
                families[families.count - 1].head.append(line)
                if line.starts(with: "# TYPE ".utf8), line.reversed().starts(with: " histogram".utf8.reversed()) {
                    families[families.count - 1].isHistogram = true
                }
                continue
            }
            guard !families.isEmpty else { continue }
            open.append(line)
            let family = families[families.count - 1]
            // A histogram's series ends with its `_count` line.
            if !family.isHistogram || line.starts(with: family.name + Array("_count".utf8)) {
                families[families.count - 1].series.append(open)
                open = []
            }
        }
        var ordered: [UInt8] = []
        ordered.reserveCapacity(text.count)
        for family in families.sorted(by: { $0.name.lexicographicallyPrecedes($1.name) }) {
            let series = family.series.sorted { $0[0].lexicographicallyPrecedes($1[0]) }
            for line in family.head + series.joined() {
                ordered += line
                ordered.append(UInt8(ascii: "\n"))
            }
        }
        return ordered
    }
}
