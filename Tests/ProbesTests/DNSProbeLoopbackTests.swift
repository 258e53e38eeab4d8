import Foundation
import Probes
import Reachable
import TestSupport
import Testing

/// `dns://` probes through the engine against real servers on loopback: dnsmasq with records of
/// several types on 127.0.0.1, a socket that never answers on 127.0.0.3, and nothing on
/// 127.0.0.4 (the kernel's ICMP port unreachable, which the socket reports as ECONNREFUSED and
/// c-ares 1.18 as every socket error). All on one free port, written in each URL.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct DNSProbeLoopbackTests {
    let directory: TemporaryDirectory
    let port: UInt16
    let dnsmasq: Dnsmasq
    let silent: SilentDNSServer
    let engine: ProbeEngine

    init() throws {
        directory = try TemporaryDirectory()
        port = try LoopbackSocket.freePort(on: ["127.0.0.1", "127.0.0.3", "127.0.0.4"])
        dnsmasq = try Dnsmasq(
            address: "127.0.0.1", port: port, records: [("db.test", "198.18.0.8"), ("nx.test", "")],
            extraArguments: [
                "--local=/test/", "--mx-host=db.test,mail.db.test,10", "--txt-record=db.test,v=spf1 -all",
                "--srv-host=_sip._tcp.db.test,sip.db.test,5060",
            ] + (10..<50).map { "--host-record=many.test,198.18.1.\($0)" }, directory: directory)
        silent = try SilentDNSServer(address: "127.0.0.3", port: port)
        engine = try ProbeEngine(resolver: ResolverConfiguration(resolvConfPath: "/nonexistent/resolv.conf"))
    }

    func probe(_ server: String, _ query: String, timeout: Duration = .seconds(5)) async throws -> ProbeOutcome {
        let url = try TargetSpec.parse("t=dns://\(server):\(port)/\(query)").url
        return await engine.probe(ProbeJob(url: url, address: try #require(url.literal), deadline: .now + timeout))
    }

    @Test func recordsOfEveryKindAndExpect() async throws {
        defer { engine.stop() }
        for query in [
            "db.test", "db.test?expect=198.18.0.8", "db.test?type=MX&expect=MAIL.db.test.",
            "db.test?type=TXT&expect=v%3Dspf1%20-all", "_sip._tcp.db.test?type=SRV&expect=sip.db.test",
        ] {
            let outcome = try await probe("127.0.0.1", query)
            #expect(outcome.succeeded, "\(query): \(outcome)")
        }
        let wrong = try await probe("127.0.0.1", "db.test?expect=198.18.0.9")
        #expect(wrong.failure == .dns && wrong.detail == "198.18.0.8, expected 198.18.0.9")
        let none = try await probe("127.0.0.1", "db.test?type=AAAA")
        #expect(none.failure == .dns && none.detail == "no AAAA records")
        let nx = try await probe("127.0.0.1", "nx.test")
        #expect(nx.failure == .dns && nx.detail == "NXDOMAIN from 127.0.0.1")
    }

    @Test func aTruncatedAnswerIsAskedAgainOverTCP() async throws {
        defer { engine.stop() }
        // 40 A records: more than 512 bytes over UDP.
        let outcome = try await probe("127.0.0.1", "many.test?expect=198.18.1.49")
        #expect(outcome.succeeded, "\(outcome)")
    }

    @Test func aSilentServerTimesOutAndAClosedPortIsRefused() async throws {
        defer { engine.stop() }
        let clock = ContinuousClock()
        let started = clock.now
        let silentOutcome = try await probe("127.0.0.3", "db.test", timeout: .milliseconds(500))
        #expect(silentOutcome.failure == .timeout)
        #expect(clock.now - started < .seconds(3))
        let closed = try await probe("127.0.0.4", "db.test")
        #expect(closed.failure == .refused, "\(closed)")
        #expect(closed.detail == "ECONNREFUSED: connection refused")
    }
}
