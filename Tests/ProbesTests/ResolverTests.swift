import Foundation
import Probes
import Reachable
import TestSupport
import Testing

/// The resolver against real DNS servers on loopback: dnsmasq for answers and NXDOMAIN, a socket that
/// never answers for timeouts.
///
/// c-ares 1.18 reads no port from `resolv.conf`, so the generated file names only addresses
/// (`nameserver 127.0.0.1`) and `ResolverConfiguration.serverPort` gives every server the test's port.
/// Switching servers is switching addresses: dnsmasq A on 127.0.0.1, dnsmasq B on 127.0.0.2, the silent
/// socket on 127.0.0.3, all on the same port.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct ResolverTests {
    static let fifty = (1...50).map { "198.18.3.\($0)" }

    let directory: TemporaryDirectory
    let port: UInt16
    let dnsA: Dnsmasq
    let dnsB: Dnsmasq
    let silent: SilentDNSServer
    let engine: ProbeEngine

    init() throws {
        directory = try TemporaryDirectory()
        port = try LoopbackSocket.freePort(on: ["127.0.0.1", "127.0.0.2", "127.0.0.3"])
        dnsA = try Dnsmasq(
            address: "127.0.0.1", port: port,
            records: [
                ("db.test", "198.18.1.10"), ("nx.test", ""), ("multi.test", "198.18.1.20"),
                ("multi.test", "198.18.1.3"), ("multi.test", "2001:db8::5"), ("v6.test", "2001:db8::10"),
            ] + Self.fifty.map { ("fifty.test", $0) }, directory: directory)
        // B is authoritative for `test` (`--local`): a name that exists without addresses is NODATA there.
        dnsB = try Dnsmasq(
            address: "127.0.0.2", port: port, records: [("db.test", "198.18.2.10")],
            extraArguments: ["--local=/test/", "--txt-record=txtonly.test,no addresses here"], directory: directory)
        silent = try SilentDNSServer(address: "127.0.0.3", port: port)
        try directory.replace("resolv.conf", with: "nameserver 127.0.0.1\n")
        engine = try ProbeEngine(
            resolver: ResolverConfiguration(resolvConfPath: directory.file("resolv.conf"), serverPort: port))
    }

    @Test func nameResolvesToItsAddress() async {
        let outcome = await engine.resolve("db.test")
        #expect(outcome.failure == nil, "\(outcome) \(dnsA.log)")
        #expect(outcome.addresses == [IPAddress("198.18.1.10")!])
    }

    /// A pinned egress has a channel of its own whose sockets are bound to the interface
    /// (`ares_set_local_dev`): through `lo` the loopback server answers; through an interface
    /// that does not exist nothing can be sent, and the kernel's-choice channel is unharmed.
    @Test func aPinnedEgressResolvesThroughItsOwnChannel() async {
        let pinned = await engine.resolve("db.test", via: .pinned(to: "lo"))
        #expect(pinned.addresses == [IPAddress("198.18.1.10")!], "\(pinned) \(dnsA.log)")
        let nowhere = await engine.resolve("db.test", via: .pinned(to: "nosuch0"), timeout: .seconds(3))
        #expect(nowhere.failure != nil && nowhere.addresses.isEmpty, "\(nowhere)")
        // Asked twice at most: once (in 600 parallel tests under CI's load) the first answer did
        // not come and c-ares gave up after one attempt (ETIMEOUT at 1.0 s; dnsmasq's log was not
        // kept then). A harmed channel fails both; what each saw is in the message.
        var unpinned = await engine.resolve("db.test")
        let first = unpinned
        if unpinned.addresses.isEmpty { unpinned = await engine.resolve("db.test") }
        #expect(unpinned.addresses == [IPAddress("198.18.1.10")!], "\(first) then \(unpinned) \(dnsA.log)")
    }

    @Test func addressesOfBothFamiliesComeBackSortedNumerically() async {
        let outcome = await engine.resolve("multi.test")
        #expect(outcome.addresses.map(\.description) == ["198.18.1.3", "198.18.1.20", "2001:db8::5"], "\(outcome)")
        let v6 = await engine.resolve("v6.test")
        #expect(v6.addresses.map(\.description) == ["2001:db8::10"], "\(v6) \(dnsA.log)")
    }

    @Test func nameWithFiftyAddressesResolvesToAllOfThem() async {
        let outcome = await engine.resolve("fifty.test")
        #expect(outcome.failure == nil)
        #expect(outcome.addresses == Self.fifty.compactMap(IPAddress.init).sorted())
    }

    @Test func nxdomainIsDNSNotTimeout() async {
        let outcome = await engine.resolve("nx.test", timeout: .seconds(60))
        #expect(outcome.failure == .dns, "\(outcome)")
        #expect(outcome.detail == "NXDOMAIN from 127.0.0.1", "ARES_ENOTFOUND, and who said so")
        #expect(outcome.addresses.isEmpty)
        #expect(outcome.duration < .seconds(30), "an answer, not a wait: \(outcome.duration)")
    }

    @Test func nameWithoutAddressesIsDNS() async throws {
        try directory.replace("resolv.conf", with: "nameserver 127.0.0.2\n")
        let outcome = await engine.resolve("txtonly.test")
        #expect(outcome.failure == .dns, "\(outcome)")
        #expect(outcome.detail == "no address for the name from 127.0.0.2", "ARES_ENODATA, not a guess")
    }

    @Test func queryTheServerRefusesIsDNS() async {
        // dnsmasq without upstream servers answers REFUSED for names it does not know.
        let outcome = await engine.resolve("unknown.test")
        #expect(outcome.failure == .dns, "\(outcome)")
    }

    @Test func silentServerIsTimeoutAtTheDeadline() async throws {
        try directory.replace("resolv.conf", with: "nameserver 127.0.0.3\n")
        let submitted = ContinuousClock.now
        let outcome = await engine.resolve("db.test", timeout: .seconds(1))
        let elapsed = ContinuousClock.now - submitted
        #expect(outcome.failure == .timeout, "\(outcome)")
        #expect(outcome.detail == "no answer before the deadline")
        // The deadline runs from submission; `duration` from when the engine thread took the
        // query, which a busy machine delays: the elapsed time is what says it waited.
        #expect(elapsed >= .milliseconds(950) && elapsed < .seconds(30), "\(elapsed)")
        #expect(outcome.duration <= elapsed, "\(outcome.duration)")
    }

    @Test func cAresGivingUpBeforeTheDeadlineIsTimeoutToo() async throws {
        try directory.replace("resolv.conf", with: "nameserver 127.0.0.3\n")
        let impatient = try ProbeEngine(
            resolver: ResolverConfiguration(
                resolvConfPath: directory.file("resolv.conf"), serverPort: port, attemptTimeout: .milliseconds(200),
                attempts: 1))
        let outcome = await impatient.resolve("db.test", timeout: .seconds(60))
        #expect(outcome.failure == .timeout, "\(outcome)")
        #expect(outcome.detail == "no answer within the timeout from 127.0.0.3", "ARES_ETIMEOUT")
        #expect(outcome.duration < .seconds(30), "c-ares's own timeout, not the deadline")
    }

    @Test func hundredQueriesToASilentServerAllTimeOutTogether() async throws {
        try directory.replace("resolv.conf", with: "nameserver 127.0.0.3\n")
        let started = ContinuousClock.now
        let outcomes = await withTaskGroup(of: ResolveOutcome.self) { group in
            for index in 0..<100 { group.addTask { await engine.resolve("n\(index).test", timeout: .seconds(1)) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let elapsed = ContinuousClock.now - started
        #expect(outcomes.count == 100)
        #expect(outcomes.allSatisfy { $0.failure == .timeout })
        #expect(elapsed < .seconds(40), "concurrent (one after another would take 100 s): \(elapsed)")
    }

    @Test func ipLiteralNeedsNoDNS() async throws {
        try directory.replace("resolv.conf", with: "nameserver 127.0.0.3\n")  // DNS would time out
        let v4 = await engine.resolve("198.18.5.5", timeout: .seconds(60))
        #expect(v4 == ResolveOutcome(addresses: [IPAddress("198.18.5.5")!], failure: nil, duration: v4.duration))
        #expect(v4.duration < .seconds(30), "not the 60 s a DNS query would wait")
        let v6 = await engine.resolve("::1", timeout: .seconds(60))
        #expect(v6.addresses == [IPAddress("::1")!])
    }

    @Test func rewrittenResolvConfIsFollowed() async throws {
        // Failed a few times in full parallel runs, each at another step: every step says what
        // came back, and what each server saw.
        let first = await engine.resolve("db.test")
        #expect(first.addresses == [IPAddress("198.18.1.10")!], "\(first) A: \(dnsA.log) B: \(dnsB.log)")
        try directory.replace("resolv.conf", with: "nameserver 127.0.0.2\n")
        let replaced = await engine.resolve("db.test")
        #expect(replaced.addresses == [IPAddress("198.18.2.10")!], "\(replaced) A: \(dnsA.log) B: \(dnsB.log)")
        // Rewritten in place (same inode): size and modification time still change. Plain
        // open/write/close, so the write is closed — and inotify's IN_CLOSE_WRITE queued — before
        // the resolution is asked for.
        try Self.rewriteInPlace(directory.file("resolv.conf"), with: "nameserver 127.0.0.1\n# edited in place\n")
        let edited = await engine.resolve("db.test")
        #expect(
            edited.addresses == [IPAddress("198.18.1.10")!],
            "\(edited), statistics \(engine.statistics) A: \(dnsA.log) B: \(dnsB.log)")
        #expect(await engine.resolve("nx.test").detail == "NXDOMAIN from 127.0.0.1", "A's answer for nx.test")
    }

    private static func rewriteInPlace(_ path: String, with text: String) throws {
        let descriptor = open(path, O_WRONLY | O_TRUNC)
        guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard close(descriptor) == 0, written == bytes.count else { throw POSIXError(.EIO) }
    }

    @Test func resolutionUnderWayFinishesOnItsOldServerAfterAChange() async throws {
        try directory.replace("resolv.conf", with: "nameserver 127.0.0.3\n")
        async let slow = engine.resolve("db.test", timeout: .milliseconds(1500))
        // Taken by the engine thread: that batch compared resolv.conf first, so it asks the old server.
        try await waitUntil("the first resolution started") { engine.statistics.resolutions == 1 }
        try directory.replace("resolv.conf", with: "nameserver 127.0.0.1\n")
        let fast = await engine.resolve("db.test")
        #expect(fast.addresses == [IPAddress("198.18.1.10")!], "the new file is read at once")
        let old = await slow
        #expect(old.failure == .timeout && !old.wasCancelled, "not cancelled by the change: \(old)")
    }

    @Test func missingResolvConfStillResolvesLiteralsAndFailsNamesCleanly() async throws {
        let engine = try ProbeEngine(
            resolver: ResolverConfiguration(resolvConfPath: directory.file("absent.conf"), serverPort: port))
        #expect(await engine.resolve("198.18.0.1").addresses == [IPAddress("198.18.0.1")!])
        // c-ares falls back to 127.0.0.1, which is dnsmasq A here: the name still resolves.
        #expect(await engine.resolve("db.test").addresses == [IPAddress("198.18.1.10")!])
    }

    @Test func localhostResolvesWithoutDNS() async throws {
        try directory.replace("resolv.conf", with: "nameserver 127.0.0.3\n")
        let outcome = await engine.resolve("localhost", timeout: .seconds(2))
        #expect(outcome.addresses.contains(IPAddress("127.0.0.1")!), "\(outcome)")
        #expect(outcome.duration < .milliseconds(500), "from the hosts file or c-ares' RFC 6761 rule")
    }
}
