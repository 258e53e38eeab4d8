import Foundation
import Probes
import Reachable
import TestSupport
import Testing

/// The nameserver check (`--dns-check`) end to end in-process, against real servers on loopback:
/// dnsmasq answering on 127.0.0.1 (the name exists) and 127.0.0.2 (NXDOMAIN: still answering), a
/// socket that never answers on 127.0.0.3, and no server at all on 127.0.0.4 (the kernel's ICMP
/// port unreachable: `refused`). All on one port (`ResolverConfiguration.serverPort`), as c-ares
/// reads no port from resolv.conf.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct NameserverCheckTests {
    let directory: TemporaryDirectory
    let port: UInt16
    let answering: Dnsmasq
    let nxdomain: Dnsmasq
    let silent: SilentDNSServer

    init() throws {
        directory = try TemporaryDirectory()
        port = try LoopbackSocket.freePort(on: ["127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4"])
        answering = try Dnsmasq(
            address: "127.0.0.1", port: port, records: [("cluster.test", "198.18.1.10")], directory: directory)
        nxdomain = try Dnsmasq(
            address: "127.0.0.2", port: port, records: [("cluster.test", "")], directory: directory)
        silent = try SilentDNSServer(address: "127.0.0.3", port: port)
    }

    /// A monitor and the probes with only the nameserver check, over `resolv` as resolv.conf.
    func start(_ resolv: String, failures: Int = 3) throws -> (NetworkMonitor, ProbeSources) {
        try directory.replace("resolv.conf", with: resolv)
        var probes = ProbeConfiguration()
        probes.dnsCheck = "cluster.test."
        probes.dnsTimeout = .milliseconds(400)
        probes.dnsInterval = .milliseconds(300)
        probes.dnsFailures = failures
        probes.resolver = ResolverConfiguration(resolvConfPath: directory.file("resolv.conf"), serverPort: port)
        var configuration = MonitorConfiguration()
        configuration.initialDNS = probes.initialDNS(since: Date())
        let monitor = try NetworkMonitor(configuration: configuration)
        let service = try #require(try ProbeSources.make(probes, monitor: monitor))
        #expect(monitor.current.dns.state == .unknown, "unknown before anything was asked")
        #expect(monitor.current.dns.name == "cluster.test.")
        service.start()
        return (monitor, service)
    }

    func waitFor(
        _ monitor: NetworkMonitor, _ what: String, _ predicate: (DNSStatus) -> Bool
    ) async throws -> DNSStatus {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if predicate(monitor.current.dns) { return monitor.current.dns }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("timed out waiting for \(what): \(String(decoding: monitor.current.jsonBytes(), as: UTF8.self))")
        throw CancellationError()
    }

    @Test func everyServerAnsweringIsOkAndNXDOMAINCountsAsAnAnswer() async throws {
        let (monitor, service) = try start("nameserver 127.0.0.1\nnameserver 127.0.0.2\n")
        defer {
            service.stop()
            monitor.close()
        }
        let dns = try await waitFor(monitor, "ok") { $0.state == .ok }
        #expect(dns.servers.map(\.address) == ["127.0.0.1", "127.0.0.2"], "resolv.conf's order")
        #expect(dns.servers.allSatisfy { $0.state == .answering && $0.reason == nil })
        #expect(dns.reason == nil)
    }

    @Test func aSilentServerAndAClosedPortFailWithTheirReasons() async throws {
        let (monitor, service) = try start("nameserver 127.0.0.1\nnameserver 127.0.0.3\nnameserver 127.0.0.4\n")
        defer {
            service.stop()
            monitor.close()
        }
        let dns = try await waitFor(monitor, "degraded with both failures") {
            $0.state == .degraded && $0.servers.filter { $0.state == .failing }.count == 2
        }
        #expect(dns.servers.map(\.state) == [.answering, .failing, .failing], "the first result decides at once")
        #expect(dns.servers[1].reason == .timeout)
        #expect(dns.servers[2].reason == .refused, "ICMP port unreachable")
    }

    @Test func noServerAnsweringIsFailingWithTheFirstServersReason() async throws {
        let (monitor, service) = try start("nameserver 127.0.0.4\nnameserver 127.0.0.3\n")
        defer {
            service.stop()
            monitor.close()
        }
        let dns = try await waitFor(monitor, "failing") { $0.state == .failing && $0.servers.count == 2 }
        #expect(dns.reason == .refused)
    }

    @Test func noNameserverIsFailingWithNoServers() async throws {
        let (monitor, service) = try start("# nothing here\nsearch test\n")
        defer {
            service.stop()
            monitor.close()
        }
        let dns = try await waitFor(monitor, "failing") { $0.state == .failing }
        #expect(dns.reason == .noServers)
        #expect(dns.servers.isEmpty)
        #expect(service.statistics.nameserverQueries == 0, "nothing was asked")
    }

    @Test func rewritingResolvConfAddsAndRemovesServersAtOnce() async throws {
        let (monitor, service) = try start("nameserver 127.0.0.1\n")
        defer {
            service.stop()
            monitor.close()
        }
        let first = try await waitFor(monitor, "ok") { $0.state == .ok }
        try directory.replace("resolv.conf", with: "nameserver 127.0.0.3\nnameserver 127.0.0.1\n")
        let changed = try await waitFor(monitor, "the new server listed and asked") {
            $0.servers.map(\.address) == ["127.0.0.3", "127.0.0.1"] && $0.servers[0].state == .failing
        }
        #expect(changed.state == .degraded)
        #expect(changed.servers[1].state == .answering, "a server that stays keeps its state")
        #expect(changed.servers[1].since == first.servers[0].since, "and its since")
        try directory.replace("resolv.conf", with: "nameserver 127.0.0.1\n")
        let back = try await waitFor(monitor, "the silent server removed") { $0.servers.count == 1 }
        #expect(back.state == .ok)
    }

    @Test func oneLostAnswerBelowTheThresholdIsTolerated() async throws {
        // 127.0.0.1 answers; then dnsmasq stops: the server fails only after 2 timeouts in a row.
        let (monitor, service) = try start("nameserver 127.0.0.1\n", failures: 2)
        defer {
            service.stop()
            monitor.close()
        }
        let up = try await waitFor(monitor, "ok") { $0.state == .ok }
        let asked = service.statistics.nameserverQueries
        answering.stop()
        let down = try await waitFor(monitor, "failing") { $0.state == .failing }
        #expect(service.statistics.nameserverQueries >= asked + 2, "two failures in a row before it turned")
        #expect(down.servers[0].reason != nil)
        #expect(down.since > up.since)
    }
}
