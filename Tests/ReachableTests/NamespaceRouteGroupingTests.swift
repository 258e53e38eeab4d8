import Foundation
import Glibc
import Synchronization
import Testing

@testable import Reachable

extension KernelTests {
    /// A batch's route questions are asked once per group of addresses the kernel cannot tell
    /// apart (`RoutePrefixes`): the verdicts must be exactly those of asking each address, through
    /// more specific routes inside less specific ones, `unreachable` and `blackhole` routes, a
    /// host route, a rule that picks a table by destination — and a multipath route, which makes
    /// its family ask address by address.
    @Suite struct NamespaceRouteGrouping {
        /// Questions in every corner of the layout `setUp` builds, kernel's choice and pinned.
        private static let questions: [RouteQuestion] = {
            var texts: [String] = []
            texts += (1...12).map { "10.1.0.\($0)" }  // the default route
            texts += (1...12).map { "198.18.77.\($0)" }  // unreachable 198.18.77.0/24
            texts += (130...141).map { "198.18.77.\($0)" }  // a /25 out of v0 inside it
            texts += ["198.18.77.200"]  // a blackhole host route inside that
            texts += (1...12).map { "198.18.88.\($0)" }  // a rule sends 198.18.88.0/24 to table 200
            texts += ["198.18.89.1", "198.18.0.7", "198.18.0.2", "127.0.0.1"]  // next door, on-link, local
            texts += (1...12).map { "2001:db8:50::\($0)" }  // the default route
            texts += (1...12).map { "2001:db8:77::\($0)" }  // unreachable 2001:db8:77::/48
            texts += (1...12).map { "2001:db8:77:1::\($0)" }  // a /64 out of v0 inside it
            texts += (1...12).map { "2001:db8:88::\($0)" }  // the rule's table 200
            texts += ["2001:db8:1::9", "::1"]
            let addresses = texts.map { IPAddress($0)! }
            return addresses.map { RouteQuestion($0) }
                + addresses.prefix(30).map { RouteQuestion($0, via: .pinned(to: "v0")) }
                + addresses.suffix(20).map { RouteQuestion($0, via: .pinned(to: "v0")) }
        }()

        private static func setUp(_ lab: VethLab) async throws {
            try await lab.configureIPv4()
            try await lab.monitored.ip("link", "set", "lo", "up")
            try await lab.monitored.ip("-6", "address", "add", "2001:db8:1::2/64", "dev", "v0", "nodad")
            try await lab.monitored.ip("-6", "route", "add", "default", "via", "2001:db8:1::1", "dev", "v0")
            try await lab.monitored.ip("route", "add", "unreachable", "198.18.77.0/24")
            try await lab.monitored.ip("route", "add", "198.18.77.128/25", "via", VethLab.gateway, "dev", "v0")
            try await lab.monitored.ip("route", "add", "blackhole", "198.18.77.200/32")
            try await lab.monitored.ip("route", "add", "unreachable", "default", "table", "200")
            try await lab.monitored.ip("rule", "add", "to", "198.18.88.0/24", "lookup", "200", "priority", "100")
            try await lab.monitored.ip("-6", "route", "add", "unreachable", "2001:db8:77::/48")
            try await lab.monitored.ip("-6", "route", "add", "2001:db8:77:1::/64", "via", "2001:db8:1::1", "dev", "v0")
            try await lab.monitored.ip("-6", "route", "add", "unreachable", "default", "table", "200")
            try await lab.monitored.ip(
                "-6", "rule", "add", "to", "2001:db8:88::/48", "lookup", "200", "priority", "100")
        }

        @Test func groupedVerdictsAreTheVerdictsOfEachAddress() async throws {
            try await withMonitoredLab(setUp: Self.setUp) { lab, monitor, recorder in
                try await Self.judgeAndCompare(lab: lab, monitor: monitor, recorder: recorder)
            }
        }

        /// A multipath route in IPv4: its family asks each address; IPv6 still groups.
        @Test func aMultipathRouteMakesItsFamilyAskEachAddress() async throws {
            try await withMonitoredLab(setUp: { lab in
                try await Self.setUp(lab)
                try await lab.monitored.ip(
                    "route", "add", "203.0.113.0/24", "nexthop", "via", VethLab.gateway, "dev", "v0",
                    "nexthop", "via", "198.18.0.3", "dev", "v0")
            }) { lab, monitor, recorder in
                try await Self.judgeAndCompare(lab: lab, monitor: monitor, recorder: recorder)
                let ipv4Questions = Self.questions.filter { !$0.address.isIPv6 }.count
                let before = monitor.statistics.groupedRouteQuestions
                try await Self.judgeAndCompare(lab: lab, monitor: monitor, recorder: recorder, batch: "192.0.3.0/24")
                let grouped = monitor.statistics.groupedRouteQuestions - before
                // Two gates ask the same questions by now (one per judgeAndCompare): each IPv6
                // question may be answered by its group's verdict twice, no IPv4 one at all.
                #expect(grouped <= 2 * (Self.questions.count - ipv4Questions), "no IPv4 question was grouped")
            }
        }

        /// More routes and rules than a grouping dump reads (a host fed a BGP table): every
        /// question is asked on its own, with the same verdicts, batch after batch.
        @Test func overThePrefixLimitEachAddressIsAsked() async throws {
            try await withMonitoredLab(setUp: { lab in
                try await Self.setUp(lab)
                let commands = (0...NetlinkSource.prefixLimit).map { index in
                    "route add 10.200.\(index / 256).\(index % 256)/32 via \(VethLab.gateway) dev v0"
                }
                let path = "/tmp/reachd-route-batch-\(getpid())-\(lab.monitored.name)"
                try commands.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
                defer { unlink(path) }
                try await lab.monitored.ip("-batch", path)
            }) { lab, monitor, recorder in
                for batch in ["192.0.2.0/24", "192.0.3.0/24"] {
                    let before = monitor.statistics.groupedRouteQuestions
                    try await Self.judgeAndCompare(
                        lab: lab, monitor: monitor, recorder: recorder, batch: batch, grouped: false)
                    #expect(monitor.statistics.groupedRouteQuestions == before, "nothing grouped after \(batch)")
                }
            }
        }

        /// Registers a gate asking `questions`, makes a batch, and compares what the gate was told
        /// with each question asked on its own.
        private static func judgeAndCompare(
            lab: VethLab, monitor: NetworkMonitor, recorder: StatusRecorder, batch: String = "192.0.2.0/24",
            grouped: Bool = true
        ) async throws {
            try await recorder.latest("both families routed") { $0.path.ipv4 && $0.path.ipv6 }
            let judged = Mutex<[Set<RouteQuestion>]>([])
            monitor.addRouteGate(
                RouteGate(
                    questions: { Self.questions },
                    judge: { unroutable, _, _ in
                        judged.withLock { $0.append(unroutable.unroutableQuestions) }
                        return nil
                    }))
            let before = monitor.statistics.groupedRouteQuestions
            let already = judged.withLock { $0.count }
            // Any change is a batch: a route nothing here asks about.
            try await lab.monitored.ip("route", "add", batch, "via", VethLab.gateway, "dev", "v0")
            let deadline = ContinuousClock.now + .seconds(30)
            while judged.withLock({ $0.count }) == already, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            let told = try #require(judged.withLock { $0.last }, "the gate judged a batch")
            let routes = try lab.monitored.makeRouteChecker(monitor)
            let expected = Set(Self.questions.filter { routes.askKernel($0.address, via: $0.egress) == .noRoute })
            let (missing, extra) = (expected.subtracting(told), told.subtracting(expected))
            #expect(
                missing.isEmpty && extra.isEmpty, "unroutable but not told: \(missing); told but routable: \(extra)")
            #expect(expected.count > 40 && expected.count < Self.questions.count - 40, "both verdicts are tested")
            if grouped { #expect(monitor.statistics.groupedRouteQuestions > before, "questions were grouped") }
        }
    }
}
