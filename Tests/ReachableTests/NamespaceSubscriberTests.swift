import Reachable
import Testing

extension KernelTests {
    /// Fan-out to many subscribers, and what `close()` does to them.
    @Suite struct NamespaceSubscribers {
        /// Waits until every subscriber's latest value is `status`.
        private static func waitForAll(_ recorders: [StatusRecorder], toSee status: ReachabilityStatus) async throws {
            let deadline = ContinuousClock.now + .seconds(30)
            while !recorders.allSatisfy({ $0.latest == status }) {
                guard ContinuousClock.now < deadline else {
                    let behind = recorders.filter { $0.latest != status }.count
                    throw StatusRecorder.Timeout(
                        waitingFor: "\(behind) subscribers to reach \(status.sequence)", latest: status)
                }
                try await Task.sleep(for: .milliseconds(2))
            }
        }

        /// Subscribers hold at most the newest undelivered status (status is state, not a log), so
        /// a value replaced within microseconds may skip a slow one; every value that stays, and
        /// every value anyone saw, must be the same for all of them, in the same order.
        @Test func twoHundredSubscribersSeeTheSameSequenceOfValues() async throws {
            try await withMonitoredLab(setUp: { try await $0.configureIPv4() }) { lab, monitor, first in
                let start = try await monitor.waitForCurrent("reachable") { $0.isReachable }
                let subscribers = (0..<200).map { _ in StatusRecorder(monitor.updates) }
                defer { subscribers.forEach { $0.cancel() } }
                #expect(monitor.subscriberCount == 201)
                try await Self.waitForAll(subscribers, toSee: start)

                try await lab.monitored.ip("link", "set", "v0", "down")
                let down = try await monitor.waitForCurrent("link down, route flushed") {
                    $0.state == .unreachable && $0.interface(named: "v0")?.isDefaultRoute == false
                        && $0.interface(named: "v0")?.operState == "down"
                }
                try await Self.waitForAll(subscribers, toSee: down)

                try await lab.monitored.ip("link", "set", "v0", "up")
                try await lab.monitored.ip("route", "replace", "default", "via", VethLab.gateway, "dev", "v0")
                let up = try await monitor.waitForCurrent("up again") {
                    $0.isReachable && $0.interface(named: "v0")?.isDefaultRoute == true
                }
                try await Self.waitForAll(subscribers, toSee: up)

                let settled = [start, down, up]
                var bySequence: [UInt64: ReachabilityStatus] = [:]
                for subscriber in subscribers {
                    let seen = subscriber.statuses
                    #expect(seen.first == start, "the current value first")
                    #expect(seen.last == up)
                    #expect(settled.allSatisfy(seen.contains), "every settled value")
                    let sequences = seen.map(\.sequence)
                    #expect(zip(sequences, sequences.dropFirst()).allSatisfy { $0 < $1 }, "in order, no repeats")
                    for status in seen {
                        if let known = bySequence[status.sequence] {
                            #expect(known == status, "one value per sequence number")
                        } else {
                            bySequence[status.sequence] = status
                        }
                    }
                }
                let reference = subscribers[0].statuses
                let identical = subscribers.filter { $0.statuses == reference }.count
                print(
                    "fan-out: \(identical)/200 subscribers saw exactly the same \(reference.count) values "
                        + "(sequences \(reference.map(\.sequence)))")
                #expect(first.latest == up)
            }
        }

        @Test func closeFinishesEveryStreamAndFreezesCurrent() async throws {
            try await withMonitoredLab(setUp: { try await $0.configureIPv4() }) { lab, monitor, recorder in
                try await recorder.latest("reachable") { $0.isReachable }
                let others = (0..<3).map { _ in StatusRecorder(monitor.updates) }
                defer { others.forEach { $0.cancel() } }
                let everyone = [recorder] + others
                let last = monitor.current
                for subscriber in others { try await subscriber.latest("current value") { $0 == last } }

                monitor.close()
                #expect(monitor.isClosed)
                for subscriber in everyone {
                    #expect(await subscriber.waitUntilFinished(), "the for-await loop ends")
                }
                #expect(monitor.subscriberCount == 0)
                #expect(monitor.current == last, "the last value stays readable")
                let counts = everyone.map(\.count)

                // The kernel keeps changing; nothing is emitted and current does not move.
                try await lab.monitored.ip("link", "set", "v0", "down")
                try await lab.monitored.ip("address", "add", "198.18.0.3/24", "dev", "v0")
                try await Task.sleep(for: .milliseconds(300))  // a source still running would have published by now
                #expect(monitor.current == last)
                #expect(everyone.map(\.count) == counts)

                // A subscriber arriving after close gets the last value and a finished stream.
                let late = StatusRecorder(monitor.updates)
                defer { late.cancel() }
                #expect(await late.waitUntilFinished())
                #expect(late.statuses == [last])

                monitor.close()  // twice is fine
                #expect(monitor.isClosed)
                #expect(monitor.current == last)
                #expect(monitor.failure == nil)
            }
        }

        @Test func concurrentClosesAllReturn() async throws {
            try await withMonitoredLab(setUp: { try await $0.configureIPv4() }) { lab, monitor, recorder in
                try await recorder.latest("reachable") { $0.isReachable }
                await withTaskGroup(of: Void.self) { group in
                    for _ in 0..<8 { group.addTask { monitor.close() } }
                }
                #expect(monitor.isClosed)
                #expect(await recorder.waitUntilFinished())
            }
        }
    }
}
