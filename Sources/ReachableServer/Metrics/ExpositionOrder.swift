/// Puts the text format in one fixed order: families by name, the series of a family by their
/// labels. swift-prometheus writes its families and series in the order of its dictionaries,
/// which changes from process to process; people diff two scrapes, and a diff of the
/// same values should be empty. A family written twice (the registry and `TargetMetrics` write
/// into one buffer; each target once had a registry of its own) still becomes one: its `# HELP`
/// and `# TYPE` once, every series in it.
enum ExpositionOrder {
    private struct Family {
        var name: [UInt8]
        /// `NAME_count`: the line that ends a histogram's series.
        var countLine: [UInt8]
        /// `# HELP` and `# TYPE`.
        var head: [ArraySlice<UInt8>] = []
        /// One series each: one line, or a histogram's buckets, `_sum` and `_count` together, so
        /// the buckets keep their order.
        var series: [[ArraySlice<UInt8>]] = []
        var isHistogram = false
    }

    static func ordered(_ text: [UInt8]) -> [UInt8] {
        var families: [Family] = []
        var byName: [[UInt8]: Int] = [:]
        var current: Int?
        var open: [ArraySlice<UInt8>] = []
        for line in text.split(separator: UInt8(ascii: "\n")) {
            if line.starts(with: "# ".utf8) {
                let words = line.split(separator: UInt8(ascii: " "), maxSplits: 3)
                let name = Array(words.dropFirst(2).first ?? [])
                let index = byName[name] ?? families.count
                if index == families.count {
                    families.append(Family(name: name, countLine: name + Array("_count".utf8)))
                    byName[name] = index
                }
                current = index
                // `# HELP` and `# TYPE` once, however many registries wrote the family.
                let kind = words.dropFirst().first
                guard !families[index].head.contains(where: { $0.dropFirst(2).starts(with: kind ?? []) }) else {
                    continue
                }
                families[index].head.append(line)
                if line.starts(with: "# TYPE ".utf8), line.reversed().starts(with: " histogram".utf8.reversed()) {
                    families[index].isHistogram = true
                }
                continue
            }
            guard let index = current else { continue }
            open.append(line)
            // A histogram's series ends with its `_count` line.
            if !families[index].isHistogram || line.starts(with: families[index].countLine) {
                families[index].series.append(open)
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
