import Testing

@testable import Reachable

/// Which directory entries a path goes through, over a made-up tree: each component, every
/// symlink followed (relative, absolute, through `..`), and where it stops.
@Suite struct PathChainTests {
    /// A tree by absolute path; a path not listed is absent.
    static func chain(_ path: String, in tree: [String: PathChain.Node], from workingDirectory: String = "/w")
        -> [String]
    {
        PathChain(path: path, workingDirectory: workingDirectory) { tree[$0] ?? .absent }
            .entries.map { $0.directory == "/" ? "/" + $0.name : $0.directory + "/" + $0.name }
    }

    @Test func everyComponentOfAPlainPath() {
        let tree: [String: PathChain.Node] = ["/etc": .other, "/etc/reachd": .other, "/etc/reachd/tls.crt": .other]
        #expect(Self.chain("/etc/reachd/tls.crt", in: tree) == ["/etc", "/etc/reachd", "/etc/reachd/tls.crt"])
    }

    @Test func aSymlinkedDirectoryUpThePathAndWhereItLeads() {
        let tree: [String: PathChain.Node] = [
            "/d": .other, "/d/current": .symlink(to: "v1"), "/d/v1": .other, "/d/v1/tls.crt": .other,
        ]
        #expect(Self.chain("/d/current/tls.crt", in: tree) == ["/d", "/d/current", "/d/v1", "/d/v1/tls.crt"])
    }

    @Test func kubernetesDataLayout() {
        let tree: [String: PathChain.Node] = [
            "/s": .other, "/s/tls.crt": .symlink(to: "..data/tls.crt"), "/s/..data": .symlink(to: "..2026_12_07_v1"),
            "/s/..2026_12_07_v1": .other, "/s/..2026_12_07_v1/tls.crt": .other,
        ]
        #expect(
            Self.chain("/s/tls.crt", in: tree) == [
                "/s", "/s/tls.crt", "/s/..data", "/s/..2026_12_07_v1", "/s/..2026_12_07_v1/tls.crt",
            ])
        #expect(
            Self.chain("/s/..data/tls.crt", in: tree) == [
                "/s", "/s/..data", "/s/..2026_12_07_v1", "/s/..2026_12_07_v1/tls.crt",
            ])
    }

    @Test func anAbsoluteTargetStartsAgainAtTheRoot() {
        let tree: [String: PathChain.Node] = [
            "/etc": .other, "/etc/resolv.conf": .symlink(to: "/run/resolve/stub.conf"),
            "/run": .other, "/run/resolve": .other, "/run/resolve/stub.conf": .other,
        ]
        #expect(
            Self.chain("/etc/resolv.conf", in: tree) == [
                "/etc", "/etc/resolv.conf", "/run", "/run/resolve", "/run/resolve/stub.conf",
            ])
    }

    /// `..` after a symlink goes up from where the symlink led, as the kernel does.
    @Test func dotDotAfterASymlinkLeavesItsTarget() {
        let tree: [String: PathChain.Node] = [
            "/a": .other, "/a/link": .symlink(to: "/x/y"), "/x": .other, "/x/y": .other, "/x/f": .other,
            "/a/rel": .symlink(to: "../x/./y/../f"),
        ]
        #expect(Self.chain("/a/link/../f", in: tree) == ["/a", "/a/link", "/x", "/x/y", "/x/f"])
        #expect(Self.chain("/a/rel", in: tree) == ["/a", "/a/rel", "/x", "/x/y", "/x/f"])
        #expect(Self.chain("/../a/./link", in: tree) == ["/a", "/a/link", "/x", "/x/y"])
    }

    @Test func aRelativePathStartsFromTheWorkingDirectory() {
        let tree: [String: PathChain.Node] = ["/w": .other, "/w/targets": .other]
        #expect(Self.chain("targets", in: tree) == ["/w/targets"])
        #expect(Self.chain("targets", in: tree, from: "/w//") == ["/w/targets"])
    }

    /// The first absent name ends the chain: its creation is what changes the path next.
    @Test func stopsAtTheFirstAbsentName() {
        let tree: [String: PathChain.Node] = ["/d": .other, "/d/current": .symlink(to: "v3")]
        #expect(Self.chain("/d/current/tls.crt", in: tree) == ["/d", "/d/current", "/d/v3"])
        #expect(Self.chain("/nonexistent/resolv.conf", in: [:]) == ["/nonexistent"])
    }

    /// A loop stops at the kernel's limit, each entry listed once.
    @Test func aSymlinkLoopStopsAtTheLimit() {
        var looked = 0
        let chain = PathChain(path: "/d/a/f", workingDirectory: "/") { path in
            looked += 1
            switch path {
            case "/d": return .other
            case "/d/a": return .symlink(to: "b")
            case "/d/b": return .symlink(to: "a")
            default: return .absent
            }
        }
        #expect(chain.entries.map(\.name) == ["d", "a", "b"])
        #expect(looked == 1 + PathChain.symlinkLimit + 1)
    }

    @Test func namesAreGroupedByDirectoryInTheOrderMet() {
        let tree: [String: PathChain.Node] = [
            "/d": .other, "/d/current": .symlink(to: "v1"), "/d/v1": .other, "/d/v1/tls.crt": .other,
        ]
        let chain = PathChain(path: "/d/current/tls.crt", workingDirectory: "/") { tree[$0] ?? .absent }
        let grouped = chain.namesByDirectory
        #expect(grouped.map(\.directory) == ["/", "/d", "/d/v1"])
        #expect(grouped.map(\.names) == [["d"], ["current", "v1"], ["tls.crt"]])
    }
}
