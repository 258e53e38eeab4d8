/// The last `capacity` elements appended, oldest first: appending to a full buffer drops the
/// oldest. Storage grows with use up to `capacity`, so a large `--history` costs nothing until
/// changes fill it.
struct RingBuffer<Element> {
    let capacity: Int
    private var storage: [Element] = []
    /// Where the oldest element is once the storage is full.
    private var oldest = 0

    init(capacity: Int) {
        precondition(capacity >= 1, "a ring holds at least one element")
        self.capacity = capacity
    }

    var count: Int { storage.count }

    mutating func append(_ element: Element) {
        if storage.count < capacity {
            storage.append(element)
        } else {
            storage[oldest] = element
            oldest = (oldest + 1) % capacity
        }
    }

    /// Oldest first.
    var elements: [Element] {
        Array(storage[oldest...] + storage[..<oldest])
    }
}
