/// Where each entry of a new array (targets, interfaces) was in the old one, paired by name: at
/// its own place first (a document's entries keep their order), else by a dictionary made only
/// when a name is not where it was. `/changes` (`UnchangedEntries`) and the status-change log
/// line pair entries this way.
public enum NamePairing {
    /// For each index of `new`, the index in `old` of the entry of the same name, or `nil`. Where
    /// `old` repeats a name, the first entry of it.
    public static func oldPlaces<Entry>(_ old: [Entry], _ new: [Entry], name: (Entry) -> String) -> [Int?] {
        var places = [Int?](repeating: nil, count: new.count)
        var byName: [String: Int]?
        for place in new.indices {
            if place < old.count, name(old[place]) == name(new[place]) {
                places[place] = place
                continue
            }
            if byName == nil {
                byName = Dictionary(old.indices.map { (name(old[$0]), $0) }, uniquingKeysWith: { first, _ in first })
            }
            places[place] = byName?[name(new[place])]
        }
        return places
    }
}
