import Glibc

/// Memory whose end touches an inaccessible page: a datagram copied to the very end of it makes
/// any read past the datagram's last byte a crash instead of a silent read of heap slack.
/// Only for code that runs in a child process (an exit test).
final class GuardedBuffer {
    private let base: UnsafeMutableRawPointer
    private let usable: Int
    private let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    init(usableBytes: Int = 64 * 1024) {
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
    func withDatagram<T>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) -> T) -> T {
        precondition(bytes.count <= usable)
        let start = base + usable - bytes.count
        bytes.withUnsafeBytes { start.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        return body(UnsafeRawBufferPointer(start: start, count: bytes.count))
    }
}
