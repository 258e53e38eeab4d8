/// The series of what comes and goes with the document and outlives a document — targets', nameservers' — by
/// name: made when one first appears, removed when a document no longer lists it, so a node's
/// scrape never shows what is gone. Kept under its owner's lock.
///
/// The series lie in an array in the order they first appeared, with each key's place in a
/// dictionary beside it: a dictionary of the series themselves kept a quarter of its slots empty,
/// each of a series' full size (docs/scale.md).
struct KeyedSeries<Series> {
    private var places: [String: Int] = [:]
    private var keys: [String] = []
    private var series: [Series] = []

    /// Updates the series of each of `items` (made with `make` when new; a key listed twice is
    /// taken once), then removes the series of every key `items` does not list.
    mutating func update<Item>(
        _ items: [Item], key: (Item) -> String, make: (Item) -> Series, update: (inout Series, Item) -> Void
    ) {
        var listed = [Bool](repeating: false, count: series.count)
        // Room for every item at once: grown by appending, the arrays doubled to up to twice the
        // room the series need (docs/scale.md).
        if items.count > series.capacity {
            keys.reserveCapacity(items.count)
            series.reserveCapacity(items.count)
        }
        for item in items {
            let name = key(item)
            let place: Int
            if let known = places[name] {
                guard !listed[known] else { continue }
                place = known
            } else {
                place = append(name, make(item))
                listed.append(false)
            }
            listed[place] = true
            update(&series[place], item)
        }
        guard listed.contains(false) else { return }
        // Some are gone: the rest keep their order, at their new places.
        var kept: [Int] = []
        kept.reserveCapacity(series.count)
        for place in series.indices where listed[place] { kept.append(place) }
        keys = kept.map { keys[$0] }
        series = kept.map { series[$0] }
        places = Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, $0) })
    }

    /// Every key with its series, in the order they first appeared (copy-on-write: taking it
    /// copies nothing until the next change).
    var all: Zip2Sequence<[String], [Series]> { zip(keys, series) }

    /// Changes the series of `key` in place, made with `make` when there is none yet: a probe may
    /// name a target before a document does.
    mutating func modify<Result>(
        _ key: String, make: (String) -> Series, _ body: (inout Series) -> Result
    ) -> Result {
        let place = places[key] ?? append(key, make(key))
        return body(&series[place])
    }

    /// Adds a key's series at the end; returns its place.
    private mutating func append(_ key: String, _ new: Series) -> Int {
        places[key] = series.count
        keys.append(key)
        series.append(new)
        return series.count - 1
    }
}
