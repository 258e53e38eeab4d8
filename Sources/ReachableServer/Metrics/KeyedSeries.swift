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

    /// Every series by its key (copy-on-write: taking it copies nothing until the next change).
    var byName: [String: Series] { byKey }

    /// Changes the series of `key` in place, made with `make` when there is none yet: a probe may
    /// name a target before a document does.
    mutating func modify<Result>(
        _ key: String, make: (String) -> Series, _ body: (inout Series) -> Result
    ) -> Result {
        if byKey[key] == nil { byKey[key] = make(key) }
        return body(&byKey[key]!)
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
