import CMalloc

/// Gives the allocator's free pages back to the kernel after a large document was published.
///
/// A change of 10,000 targets allocates and frees tens of megabytes in small blocks (the diff's
/// parse tree for `/changes`, the log line, the judged entries). glibc keeps them in its arenas,
/// and the next change reuses only part of them: after ten link-downs reachd held 175 MB, of which
/// `malloc_trim` gave back 64 MB. Only after a document of at least `threshold` bytes (about 3,000
/// targets): a small one frees little, and a trim walks every free block of every arena.
enum AllocatorTrim {
    static let threshold = 1 << 20

    /// Trims when `documentSize` is at least `threshold`; says whether it did.
    @discardableResult
    static func afterPublishing(documentSize: Int) -> Bool {
        guard documentSize >= threshold else { return false }
        _ = malloc_trim(0)
        return true
    }
}
