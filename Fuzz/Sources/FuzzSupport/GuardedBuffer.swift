import Glibc

/// Memory whose end touches an inaccessible page. Bytes copied to the very end of it make any
/// read past their last byte a crash — also from C code such as libmnl, which AddressSanitizer
/// does not instrument. Unchecked `Sendable`: libFuzzer runs one input at a time, on one thread.
public final class GuardedBuffer: @unchecked Sendable {
    private let base: UnsafeMutableRawPointer
    private let usable: Int
    private let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    public init(usableBytes: Int) {
        usable = (usableBytes + pageSize - 1) / pageSize * pageSize
        guard let mapped = mmap(nil, usable + pageSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
            mapped != MAP_FAILED
        else { fatalError("mmap failed") }
        base = mapped
        guard mprotect(base + usable, pageSize, PROT_NONE) == 0 else { fatalError("mprotect failed") }
    }

    deinit {
        munmap(base, usable + pageSize)
    }

    /// Calls `body` with `bytes` placed so that the byte after the last one is unreadable.
    public func withBytes<T>(_ bytes: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> T) -> T {
        precondition(bytes.count <= usable, "\(bytes.count) bytes do not fit the guarded buffer")
        let start = base + usable - bytes.count
        if let source = bytes.baseAddress { start.copyMemory(from: source, byteCount: bytes.count) }
        return body(UnsafeRawBufferPointer(start: start, count: bytes.count))
    }
}
