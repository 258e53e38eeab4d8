import Synchronization
import Testing

@testable import Reachable

extension KernelTests {
    /// A probe's own route check (`RouteChecker.route`) takes the last batch's verdict for a
    /// question that batch found without a usable route, until the next batch: the kernel was
    /// asked that very question when the batch was judged. Routable questions, and every question
    /// once another batch came, are asked of the kernel. Both families, both ways out.
    @Suite struct NamespaceRouteChecker {
        private static let gone4 = IPAddress("203.0.113.7")!
        private static let gone6 = IPAddress("2001:db8:77::7")!
        private static let routed4 = IPAddress("10.1.0.1")!
        private static let routed6 = IPAddress("2001:db8:50::1")!
        private static let questions = [gone4, gone6, routed4, routed6].flatMap {
            [RouteQuestion($0), RouteQuestion($0, via: .pinned(to: "v0"))]
        }

        @Test func aBatchsUnroutableVerdictsAnswerTheProbesUntilTheNextBatch() async throws {
            try await withMonitoredLab(setUp: { lab in
                try await lab.configureIPv4()
                try await lab.monitored.ip("-6", "address", "add", "2001:db8:1::2/64", "dev", "v0", "nodad")
                try await lab.monitored.ip("-6", "route", "add", "default", "via", "2001:db8:1::1", "dev", "v0")
            }) { lab, monitor, recorder in
                try await recorder.latest("both families routed") { $0.path.ipv4 && $0.path.ipv6 }
                let judged = Atomic(0)
                monitor.addRouteGate(
                    RouteGate(
                        questions: { Self.questions },
                        judge: { _, _, _, publish in
                            judged.add(1, ordering: .relaxed)
                            publish { _ in }
                        }))
                let routes = try lab.monitored.makeRouteChecker(monitor)

                // A batch that takes both families' gone addresses off the table.
                try await lab.monitored.ip("route", "add", "unreachable", "203.0.113.0/24")
                try await lab.monitored.ip("-6", "route", "add", "unreachable", "2001:db8:77::/48")
                // (The two routes may come as two batches: wait for the one that has both.)
                let bothGone: Set = [RouteQuestion(Self.gone4), RouteQuestion(Self.gone6)]
                try await Self.waitUntil("the batch's verdicts are published") {
                    monitor.unroutableSinceBatch?.verdicts.unroutableQuestions.isSuperset(of: bothGone) == true
                }
                // Both families' gone addresses out of the kernel's choice at least (what a lookup
                // pinned to v0 says of them is the kernel's own business: asked below).
                let gone = try #require(monitor.unroutableSinceBatch?.verdicts.unroutableQuestions)
                #expect(gone.isSuperset(of: bothGone))
                #expect(gone.allSatisfy { $0.address == Self.gone4 || $0.address == Self.gone6 })
                var asked = routes.kernelLookups
                // The first checks are read from the verdicts one by one; past 32 of them and
                // 50 ms after the first, from a set made of them.
                for round in 0..<40 {
                    if round == 20 { try await Task.sleep(for: .milliseconds(60)) }
                    for question in gone {
                        #expect(routes.route(to: question.address, via: question.egress) == .noRoute)
                    }
                }
                #expect(routes.kernelLookups == asked, "the batch's verdicts answered: nothing asked again")
                for question in gone {  // the kernel agrees (asked on purpose)
                    #expect(routes.askKernel(question.address, via: question.egress) == .noRoute)
                }
                asked = routes.kernelLookups
                #expect(
                    routes.route(to: Self.routed4) == .routable(interface: "v0", source: IPAddress(VethLab.address)))
                #expect(
                    routes.route(to: Self.routed6) == .routable(interface: "v0", source: IPAddress("2001:db8:1::2")))
                #expect(routes.kernelLookups == asked + 2, "a routable question is asked: its interface and source")

                // The next batch gives both back: the kernel is asked again, and says so.
                let before = judged.load(ordering: .relaxed)
                try await lab.monitored.ip("route", "del", "unreachable", "203.0.113.0/24")
                try await lab.monitored.ip("-6", "route", "del", "unreachable", "2001:db8:77::/48")
                try await Self.waitUntil("the next batch was judged") {
                    judged.load(ordering: .relaxed) > before && monitor.unroutableSinceBatch == nil
                }
                asked = routes.kernelLookups
                #expect(routes.route(to: Self.gone4) == .routable(interface: "v0", source: IPAddress(VethLab.address)))
                #expect(routes.route(to: Self.gone6) == .routable(interface: "v0", source: IPAddress("2001:db8:1::2")))
                #expect(routes.kernelLookups == asked + 2)
            }
        }

        /// Waits until `condition` holds, and still holds 50 ms later: while a batch arrives and
        /// is judged, `unroutableSinceBatch` is `nil` for a moment (the last batch's verdicts are
        /// superseded before the new ones are kept), which the batch that ends it is not.
        private static func waitUntil(_ what: String, _ condition: () -> Bool) async throws {
            let deadline = ContinuousClock.now + .seconds(30)
            var held = false
            while !held, ContinuousClock.now < deadline {
                if condition() {
                    try await Task.sleep(for: .milliseconds(50))
                    held = condition()
                } else {
                    try await Task.sleep(for: .milliseconds(10))
                }
            }
            #expect(held, "\(what) within 30 s")
        }
    }
}
