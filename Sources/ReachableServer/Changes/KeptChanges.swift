/// The changes `/changes` keeps, each as its rendered JSON object (`KeptChange`: compressed when
/// large), oldest first: the last `capacity` (`--history`), and of those only as many of the
/// newest as fit in `byteBudget` — counted as JSON, the size of the answer they make.
///
/// The byte bound is for fleets: a large fleet's link-down is one change of megabytes (every
/// target's state, reason and families), and `--history` of them would hold gigabytes. The newest change is
/// always kept, whatever its size, so `/changes` always shows the last one. Storage grows with
/// use, so a large `--history` costs nothing until changes fill it.
struct KeptChanges {
    /// The default `byteBudget`: some 50,000 changes of one target, or a few of a large fleet.
    static let defaultByteBudget = 16 << 20

    let capacity: Int
    let byteBudget: Int
    /// Kept changes from `first` on; the slots before it were dropped and are reused by compacting.
    private var storage: [KeptChange] = []
    private var first = 0
    /// The bytes of the kept changes' JSON.
    private(set) var bytes = 0
    /// The bytes they hold (less: the large ones are compressed).
    private(set) var storedBytes = 0

    init(capacity: Int, byteBudget: Int = Self.defaultByteBudget) {
        precondition(capacity >= 1, "at least one change is kept")
        self.capacity = capacity
        self.byteBudget = byteBudget
    }

    var count: Int { storage.count - first }

    /// Appends `change` and drops the oldest until both bounds hold (or only `change` is left).
    mutating func append(_ change: KeptChange) {
        storage.append(change)
        bytes += change.count
        storedBytes += change.storedCount
        while count > capacity || (bytes > byteBudget && count > 1) {
            bytes -= storage[first].count
            storedBytes -= storage[first].storedCount
            storage[first] = KeptChange([])
            first += 1
        }
        // Dropped slots are removed once they are half the storage: each append stays O(1) on average.
        if first > 0, first * 2 >= storage.count {
            storage.removeFirst(first)
            first = 0
        }
    }

    /// Oldest first.
    var elements: ArraySlice<KeptChange> { storage[first...] }
}
