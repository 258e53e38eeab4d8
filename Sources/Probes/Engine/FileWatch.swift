import Glibc
package import Reachable

/// Notices when one file changes (`/etc/resolv.conf`, a `--targets-file`): written in place,
/// replaced by a rename (what resolvconf and NetworkManager do), created, or reached through a
/// symlink in its directory that is swapped (a Kubernetes ConfigMap update: kubelet writes a new
/// timestamped directory and renames a `..data` symlink over the old one). An inotify descriptor
/// the engine thread polls with its others — no thread and no timer of its own.
///
/// Only the engine thread uses it.
package final class FileWatch {
    private let descriptor: OwnedDescriptor
    private let name: String
    private let path: String
    /// What the file's own watch listens for.
    private let fileEvents: UInt32
    private var fileWatch: Int32 = -1
    /// What the path led to when last seen (inode, size, time): an event in the directory under
    /// another name counts only when it changed this — a symlink the path goes through was swapped.
    private var signature: FileSignature?

    /// - Parameter completedWritesOnly: notice a write in place only when the writer closes the
    ///   file (not at each `write`), so a reader never sees it half written.
    package init(path: String, completedWritesOnly: Bool = false) throws(SystemError) {
        self.path = path
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[..<$0]).isEmpty ? "/" : String(path[..<$0]) } ?? "."
        name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        fileEvents = UInt32(
            IN_CLOSE_WRITE | IN_ATTRIB | IN_MOVE_SELF | IN_DELETE_SELF | (completedWritesOnly ? 0 : IN_MODIFY))
        descriptor = OwnedDescriptor(
            taking: try systemCall("inotify_init1") { inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK)) })
        // The directory: a file replaced by rename or created, or a symlink swapped, shows up here.
        let watched = descriptor.rawValue
        try systemCall("inotify_add_watch \(directory)") {
            inotify_add_watch(watched, directory, UInt32(IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE))
        }
        signature = FileSignature(path: path)
        watchFile()
    }

    package var pollDescriptor: Int32 { descriptor.rawValue }

    /// The file itself, through any symlinks (and through a bind mount, as `ip netns exec` mounts
    /// resolv.conf): a write in place shows up only here. Absent for now: the directory's watch
    /// sees it created.
    private func watchFile() {
        let watched = descriptor.rawValue
        fileWatch =
            (try? systemCall("inotify_add_watch \(path)") { inotify_add_watch(watched, path, fileEvents) }) ?? -1
    }

    /// Follows the path again (it may lead to another file now), dropping the old file's watch.
    private func followAgain() {
        let (watched, old) = (descriptor.rawValue, fileWatch)
        if old >= 0 { _ = try? systemCall("inotify_rm_watch") { inotify_rm_watch(watched, old) } }
        watchFile()
    }

    /// Reads every pending event; true if any was about the file.
    package func drain() -> Bool {
        var changed = false
        var follow = false
        var otherNames = false
        var buffer = [UInt8](repeating: 0, count: 4096)
        let watched = descriptor.rawValue
        while true {
            guard let count = try? systemCall("read inotify", { read(watched, &buffer, buffer.count) }), count > 0
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
                    follow = true  // a new file under the name
                } else if !eventName.isEmpty {
                    otherNames = true
                }
                offset = nameStart + length
            }
        }
        let now = FileSignature(path: path)
        if otherNames, now != signature {
            changed = true
            follow = true
        }
        signature = now
        if follow || fileWatch < 0 { followAgain() }
        return changed
    }
}
