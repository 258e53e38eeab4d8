/// Each keyed timer's number, by source and item (`EngineCore`): per source an array indexed by
/// item, as the sources number their items from 0, rather than a dictionary keyed by both.
///
/// After a link-down the target scheduler asks whether each target has a timer pending
/// (`ProbeScheduler.beginAll`), on the engine thread while the document is being written, and
/// every probe sets a timer: an index is cheaper than a hashed lookup. An array is also a third
/// of the dictionary's memory or less (8 bytes an item, grown by doubling, where the dictionary
/// had a slot of 24 bytes an item with at least a quarter of them empty). See docs/scale.md.
struct KeyedTimers {
    /// A number for each item; 0: none (numbers start at 1).
    private var numbers: [[UInt64]] = [[], [], [], []]

    /// The number of `key`'s pending timer; `nil` when it has none.
    subscript(key: EngineTimerKey) -> UInt64? {
        get {
            let source = Self.place(of: key.source)
            guard key.item >= 0, key.item < numbers[source].count else { return nil }
            let number = numbers[source][key.item]
            return number == 0 ? nil : number
        }
        set {
            let source = Self.place(of: key.source)
            precondition(key.item >= 0, "a timer's item is an index")
            if key.item >= numbers[source].count {
                guard newValue != nil else { return }
                numbers[source].append(contentsOf: repeatElement(0, count: key.item + 1 - numbers[source].count))
            }
            numbers[source][key.item] = newValue ?? 0
        }
    }

    private static func place(of source: EngineTimerKey.Source) -> Int {
        switch source {
        case .targets: 0
        case .connectivity: 1
        case .uplinks: 2
        case .nameservers: 3
        }
    }
}
