import CProbeLibraries  // timespec (st_mtim) is imported through c-ares' headers
import Glibc

/// Identity and version of a file without reading it: device, inode, size and modification time.
///
/// Compared before each batch of resolutions, so an edited or replaced `resolv.conf` (editors and
/// resolvconf write a new file and rename it: a new inode) re-initialises the channel without a
/// watcher thread. One `stat` per batch is far cheaper than the DNS query that follows.
struct FileSignature: Equatable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modifiedSeconds: Int
    var modifiedNanoseconds: Int

    /// `nil` when the file cannot be read (c-ares then uses its defaults, as the C library does).
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modifiedSeconds = info.st_mtim.tv_sec
        modifiedNanoseconds = info.st_mtim.tv_nsec
    }
}
