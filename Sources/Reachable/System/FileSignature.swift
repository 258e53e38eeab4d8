import Glibc

/// Identity and version of a file without reading it: device, inode, size and modification time.
///
/// `FileWatch` compares it when a name along the watched path is created, removed or renamed:
/// only a change of what the path leads to (a swapped symlink) counts as a change.
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
