import Glibc
import Reachable

/// Notices when one file changes (`/etc/resolv.conf`): written in place, replaced by a rename
/// (what resolvconf and NetworkManager do), or created. An inotify descriptor the engine thread
/// polls with its others — no thread and no timer of its own.
///
/// Only the engine thread uses it.
final class FileWatch {
    private let descriptor: Int32
    private let directory: String
    private let name: String
    private let path: String
    private var fileWatch: Int32 = -1

    init(path: String) throws(SystemError) {
        self.path = path
        let slash = path.lastIndex(of: "/")
        directory = slash.map { String(path[..<$0]).isEmpty ? "/" : String(path[..<$0]) } ?? "."
        name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        descriptor = try systemCall("inotify_init1") { inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK)) }
        // The directory: a file replaced by rename, or created, shows up here by name.
        _ = inotify_add_watch(descriptor, directory, UInt32(IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE))
        watchFile()
    }

    deinit {
        close(descriptor)
    }

    var pollDescriptor: Int32 { descriptor }

    /// The file itself (through a bind mount too, as `ip netns exec` mounts resolv.conf): a write
    /// in place shows up only here — when the writer closes it, not at each `write` (`IN_MODIFY`
    /// fires at the truncation too, and reading then finds the file empty or half written).
    private func watchFile() {
        fileWatch = inotify_add_watch(
            descriptor, path, UInt32(IN_CLOSE_WRITE | IN_ATTRIB | IN_MOVE_SELF | IN_DELETE_SELF))
    }

    /// Reads every pending event; true if any was about the file.
    func drain() -> Bool {
        var changed = false
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            guard let count = try? systemCall("read inotify", { read(descriptor, &buffer, buffer.count) }), count > 0
            else { break }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let (watch, mask, length) = buffer.withUnsafeBytes { raw in
                    let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    return (event.wd, event.mask, Int(event.len))
                }
                let nameStart = offset + MemoryLayout<inotify_event>.size
                let eventName = String(
                    decoding: buffer[nameStart..<min(nameStart + length, count)].prefix { $0 != 0 }, as: UTF8.self)
                if watch == fileWatch {
                    changed = true
                    if mask & UInt32(IN_MOVE_SELF | IN_DELETE_SELF | IN_IGNORED) != 0 { fileWatch = -1 }
                } else if eventName == name {
                    changed = true
                    watchFile()  // a new file under the name: follow it
                }
                offset = nameStart + length
            }
        }
        if fileWatch < 0 { watchFile() }
        return changed
    }
}
