/// The series of what comes and goes with the document — interfaces, targets, nameservers — by
/// name: made when one first appears, removed when a document no longer lists it, so a node's
/// scrape never shows what is gone. Kept under its owner's lock.
struct KeyedSeries<Series> {
    private var byKey: [String: Series] = [:]

    /// Updates the series of each of `items` (made with `make` when new; a key listed twice is
    /// taken once), then removes the series of every key `items` does not list.
    mutating func update<Item>(
        _ items: [Item], key: (Item) -> String, make: (Item) -> Series, update: (inout Series, Item) -> Void,
        remove: (Series) -> Void
    ) {
        var seen = Set<String>()
        for item in items {
            let name = key(item)
            guard seen.insert(name).inserted else { continue }
            var series = byKey[name] ?? make(item)
            update(&series, item)
            byKey[name] = series
        }
        for (name, series) in byKey where !seen.contains(name) {
            remove(series)
            byKey[name] = nil
        }
    }

    /// Every key's series, in no particular order.
    var all: Dictionary<String, Series>.Values { byKey.values }

    /// Puts back a series taken with `series(_:make:)` and changed.
    mutating func replace(_ key: String, with series: Series) {
        byKey[key] = series
    }

    /// The series of `key`, made with `make` when there is none yet: a probe or a query may name
    /// a target or a nameserver before a document does.
    mutating func series(_ key: String, make: (String) -> Series) -> Series {
        if let series = byKey[key] { return series }
        let series = make(key)
        byKey[key] = series
        return series
    }
}
