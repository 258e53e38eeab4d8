import Glibc

/// Notices when one file changes (`/etc/resolv.conf`, a `--targets-file`, the web config and
/// the files it names): written in place, replaced by a rename (what resolvconf and
/// NetworkManager do), created, or reached through a symlink that is swapped **anywhere along the
/// path** — `current -> v2` renamed over `current -> v1` two directories up, a Kubernetes ConfigMap
/// or Secret update (kubelet renames a `..data` symlink over the old one) — or a directory on the
/// way renamed or replaced. An inotify descriptor its owner polls with its others: no thread and
/// no timer of its own.
///
/// Every directory the path goes through (`PathChain`) is watched for the one name in it that
/// matters; an event on such a name follows the path again, and counts as a change only when what
/// the path leads to is another file or another version (`FileSignature`), so an unrelated
/// rename beside it, or a swap to an identical target, is not a change.
///
/// Only one thread uses it (the engine's, or the web config's watch).
package final class FileWatch {
    private let descriptor: OwnedDescriptor
    private let path: String
    /// What the file's own watch listens for.
    private let fileEvents: UInt32
    private var fileWatch: Int32 = -1
    /// Each directory watched, with the names in it the path goes through.
    private var namesByWatch: [Int32: Set<String>] = [:]
    /// What the path led to when last seen (inode, size, time): an event on a name along the path
    /// counts only when it changed this.
    private var signature: FileSignature?

    /// A name along the path created, removed or renamed (either way), or a directory on the path
    /// itself moved or gone; a file written under a watched name (before its own watch is set).
    private static let directoryEvents = UInt32(
        IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF | IN_CLOSE_WRITE)

    /// - Parameter completedWritesOnly: notice a write in place only when the writer closes the
    ///   file (not at each `write`), so a reader never sees it half written.
    /// - Throws: when not one directory along the path can be watched.
    package init(path: String, completedWritesOnly: Bool = false) throws(SystemError) {
        self.path = path
        fileEvents = UInt32(
            IN_CLOSE_WRITE | IN_ATTRIB | IN_MOVE_SELF | IN_DELETE_SELF | (completedWritesOnly ? 0 : IN_MODIFY))
        descriptor = OwnedDescriptor(
            taking: try systemCall("inotify_init1") { inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK)) })
        if let failure = followPath() { throw failure }
        signature = FileSignature(path: path)
    }

    package var pollDescriptor: Int32 { descriptor.rawValue }

    /// Reads every pending event; true if what the path leads to changed.
    package func drain() -> Bool {
        var changed = false
        var follow = false
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
                offset = nameStart + length
                if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    // Events were lost: anything may have happened.
                    changed = true
                    follow = true
                } else if watch == fileWatch {
                    changed = true
                    if mask & UInt32(IN_MOVE_SELF | IN_DELETE_SELF | IN_IGNORED) != 0 { follow = true }
                } else if let names = namesByWatch[watch] {
                    if mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED) != 0 {
                        follow = true  // a directory on the way moved or gone
                    } else if names.contains(eventName) {
                        follow = true
                        // Written in place before the file's own watch was set (only a file is
                        // written: a name further up is a directory or a symlink).
                        if mask & UInt32(IN_CLOSE_WRITE) != 0 { changed = true }
                    }
                }
                // Else a watch already dropped (its IN_IGNORED), or another name beside one on the path.
            }
        }
        if follow { _ = followPath() }
        // Not compared after an event beside the path only: a file being written (whose own watch
        // waits for it to be closed) must not be read half written because a name next to it moved.
        if follow || changed {
            let now = FileSignature(path: path)
            changed = changed || now != signature
            signature = now
        }
        return changed
    }

    /// Watches every directory the path goes through now and the file it leads to, then drops the
    /// watches no longer on the way. If the path was changed while the watches were being set,
    /// starts again (a few times: the next event follows it anyway). Returns why nothing at all
    /// could be watched, if so.
    @discardableResult
    private func followPath() -> SystemError? {
        var failure: SystemError?
        for _ in 0..<3 {
            let chain = PathChain.current(path)
            failure = watch(chain)
            if PathChain.current(path) == chain { break }
        }
        return failure
    }

    private func watch(_ chain: PathChain) -> SystemError? {
        let watched = descriptor.rawValue
        var names: [Int32: Set<String>] = [:]
        var failure: SystemError?
        // Added before the old ones are removed: a directory still on the way keeps its watch
        // (inotify hands back the same descriptor for the same directory, whatever its path).
        for (directory, entryNames) in chain.namesByDirectory {
            do throws(SystemError) {
                let watch = try systemCall("inotify_add_watch \(directory)") {
                    inotify_add_watch(watched, directory, Self.directoryEvents | UInt32(IN_ONLYDIR))
                }
                names[watch, default: []].formUnion(entryNames)
            } catch {
                failure = error  // not readable, or gone meanwhile: the rest still serve
            }
        }
        // The file itself, through any symlinks (and through a bind mount, as `ip netns exec`
        // mounts resolv.conf): a write in place shows up only here. Absent for now: its
        // directory's watch sees it created.
        let file = (try? systemCall("inotify_add_watch \(path)") { inotify_add_watch(watched, path, fileEvents) }) ?? -1
        var dropped = Set(namesByWatch.keys)
        if fileWatch >= 0 { dropped.insert(fileWatch) }
        dropped.subtract(names.keys)
        dropped.remove(file)
        for watch in dropped { _ = try? systemCall("inotify_rm_watch") { inotify_rm_watch(watched, watch) } }
        namesByWatch = names
        fileWatch = file
        return names.isEmpty ? failure ?? SystemError("inotify_add_watch \(path)", code: ENOENT) : nil
    }
}
