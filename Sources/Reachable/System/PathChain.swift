import Glibc

/// Every directory entry a path goes through, followed the way the kernel follows it: each
/// component in turn and every symlink met on the way (to at most 40, the kernel's own limit).
/// Replacing, removing or creating any of these entries can change what the path leads to — the
/// deploy-by-symlink `current -> v2` swap, a Kubernetes `..data` swap, a directory renamed — so
/// `FileWatch` watches the directory of each for that name.
///
/// Pure: the file system is asked through `lookup`, so a test can hand it a made-up tree.
struct PathChain: Equatable {
    /// A name in a directory that the path goes through.
    struct Entry: Hashable {
        /// Symlink-free and absolute: the directory an inotify watch is set on.
        var directory: String
        var name: String
    }

    /// What is under a name.
    enum Node: Equatable {
        case absent
        case symlink(to: String)
        /// A file or a directory: followed no further (the next component, if any, goes into it).
        case other
    }

    /// The kernel's limit of symlinks followed for one path (`ELOOP` past it).
    static let symlinkLimit = 40

    /// In the order they are met, each once.
    private(set) var entries: [Entry] = []

    /// - Parameters:
    ///   - workingDirectory: what a relative path starts from.
    ///   - lookup: what is at an absolute, symlink-free path (`lstat`, `readlink`).
    init(path: String, workingDirectory: String, lookup: (String) -> Node) {
        var directory = path.hasPrefix("/") ? "/" : Self.normalized(workingDirectory)
        var pending = Self.components(path)
        var seen: Set<Entry> = []
        var linksFollowed = 0
        while !pending.isEmpty {
            let name = pending.removeFirst()
            switch name {
            case ".": continue
            case "..":
                directory = Self.parent(of: directory)
                continue
            default: break
            }
            let entry = Entry(directory: directory, name: name)
            if seen.insert(entry).inserted { entries.append(entry) }
            let full = Self.join(directory, name)
            switch lookup(full) {
            case .absent:
                return  // nothing further exists yet: its creation here is what to wait for
            case .other:
                directory = full
            case .symlink(let target):
                linksFollowed += 1
                guard linksFollowed <= Self.symlinkLimit, !target.isEmpty else { return }
                if target.hasPrefix("/") { directory = "/" }
                pending.insert(contentsOf: Self.components(target), at: 0)
            }
        }
    }

    /// The chain of `path` as the file system has it now.
    static func current(_ path: String) -> PathChain {
        PathChain(path: path, workingDirectory: workingDirectory(), lookup: node(at:))
    }

    /// The directories to watch, each with the names in it that the path goes through.
    var namesByDirectory: [(directory: String, names: Set<String>)] {
        var order: [String] = []
        var names: [String: Set<String>] = [:]
        for entry in entries {
            if names[entry.directory] == nil { order.append(entry.directory) }
            names[entry.directory, default: []].insert(entry.name)
        }
        return order.map { ($0, names[$0]!) }
    }

    private static func components(_ path: String) -> [String] {
        path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    }

    private static func normalized(_ directory: String) -> String {
        "/" + components(directory).joined(separator: "/")
    }

    private static func join(_ directory: String, _ name: String) -> String {
        directory == "/" ? "/" + name : directory + "/" + name
    }

    /// The directory is already symlink-free, so its parent by name is the kernel's `..` (and `/..`
    /// is `/`).
    private static func parent(of directory: String) -> String {
        guard let slash = directory.lastIndex(of: "/"), slash != directory.startIndex else { return "/" }
        return String(directory[..<slash])
    }

    private static func node(at path: String) -> Node {
        var info = stat()
        guard lstat(path, &info) == 0 else { return .absent }
        guard info.st_mode & S_IFMT == S_IFLNK else { return .other }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink(path, &buffer, buffer.count - 1)
        guard length >= 0 else { return .absent }  // replaced between the two calls: seen again
        return .symlink(to: String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    private static func workingDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return "/" }
        return String(cString: buffer)
    }
}
