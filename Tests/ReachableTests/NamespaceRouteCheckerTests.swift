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
                        judge: { _, _, _ in
                            judged.add(1, ordering: .relaxed)
                            return nil
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

        /// While a batch is judged no probe result is taken (`isCurrent`, `update(ifEpoch:)`), not
        /// even one of a run begun after the batch arrived: a gate's judgement and the batch's
        /// document have nothing between them. Once the batch is published, results are taken again.
        @Test func noResultIsTakenWhileABatchIsJudged() async throws {
            try await withMonitoredLab(setUp: { lab in try await lab.configureIPv4() }) { lab, monitor, recorder in
                try await recorder.latest("routed") { $0.path.ipv4 }
                // What the gate saw while judging: (isCurrent, update applied) for the epoch then.
                let seen = Mutex<[(current: Bool, applied: Bool)]>([])
                monitor.addRouteGate(
                    RouteGate(
                        questions: { [RouteQuestion(Self.routed4)] },
                        judge: { _, _, _ in
                            let epoch = monitor.networkEpoch
                            let current = monitor.isCurrent(epoch)
                            let applied = monitor.update(ifEpoch: epoch, deferred: true) { _ in }
                            seen.withLock { $0.append((current, applied)) }
                            return nil
                        }))
                try await lab.monitored.ip("route", "add", "198.51.100.0/24", "via", VethLab.gateway, "dev", "v0")
                try await Self.waitUntil("the gate judged a batch") { !seen.withLock { $0.isEmpty } }
                for (current, applied) in seen.withLock({ $0 }) {
                    #expect(!current && !applied, "a result was taken while a batch was judged")
                }
                try await Self.waitUntil("results are taken again") { monitor.isCurrent(monitor.networkEpoch) }
                #expect(monitor.update(ifEpoch: monitor.networkEpoch) { _ in })
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
