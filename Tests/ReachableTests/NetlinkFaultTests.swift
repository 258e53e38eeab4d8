import Glibc
import Testing

@testable import Reachable

extension KernelTests {
    /// Faults injected at the system-call seam of a real monitor in a namespace: the kernel
    /// connection breaks, cannot be reopened for a while, or a lookup fails for a passing reason.
    @Suite struct NetlinkFaults {
        static func configuration(_ faults: FaultyNetlink, attempts: Int = 3) -> MonitorConfiguration {
            var configuration = MonitorConfiguration()
            configuration.netlinkSystemCalls = faults.calls
            configuration.recoveryPause = .milliseconds(20)
            configuration.recoveryPauseLimit = .milliseconds(100)
            configuration.recoveryAttempts = attempts
            return configuration
        }

        @Test func aFailedReceiveShowsUnknownThenReopensAndFollowsAgain() async throws {
            let faults = FaultyNetlink()
            try await withMonitoredLab(Self.configuration(faults), setUp: { try await $0.configureIPv4() }) {
                lab, monitor, recorder in
                try await recorder.latest("reachable") { $0.isReachable }
                faults.failEventReceives(1, with: EIO)
                try await lab.monitored.ip("address", "add", "198.18.0.3/24", "dev", "v0")
                try await recorder.first("unknown while the kernel cannot be observed") { $0.state == .unknown }
                let recovered = try await recorder.latest("reachable again, with the change made meanwhile") {
                    $0.isReachable && $0.interface(named: "v0")?.addresses.contains("198.18.0.3/24") == true
                }
                #expect(monitor.failure == nil, "one failed read is not a failure for good")
                #expect(monitor.statistics.reconnects == 1)
                #expect(faults.injected == 1)

                // The reopened sockets follow later changes too.
                try await lab.monitored.ip("link", "set", "v0", "down")
                try await recorder.latest("unreachable after link down") { $0.state == .unreachable }
                #expect(recovered.sequence > 0)
            }
        }

        @Test func reopeningThatKeepsFailingFailsLivenessUntilItWorksAgain() async throws {
            let faults = FaultyNetlink()
            try await withMonitoredLab(Self.configuration(faults, attempts: 3), setUp: { try await $0.configureIPv4() })
            {
                lab, monitor, recorder in
                try await recorder.latest("reachable") { $0.isReachable }
                faults.failOpens(4, with: EMFILE)
                faults.failEventReceives(1, with: ENOTSOCK)
                try await lab.monitored.ip("link", "set", "v0", "down")
                try await recorder.first("unknown") { $0.state == .unknown }
                let deadline = ContinuousClock.now + .seconds(30)
                var failure = monitor.failure
                while failure == nil, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(5))
                    failure = monitor.failure
                }
                let reported = try #require(failure, "three failed reopenings are a failure for good")
                #expect(reported.kind == .connectionLost(attempts: 3))
                #expect(reported.cause.code == EMFILE)
                #expect(monitor.current.state == .unknown, "never a guess while the kernel is not observed")

                // The fourth failure passes, the fifth attempt opens: followed again, failure cleared.
                let back = try await recorder.latest("observed again: v0 is down") {
                    $0.state == .unreachable && $0.interface(named: "v0")?.operState == "down"
                }
                #expect(back.state == .unreachable)
                try await monitor.waitForCurrent("failure cleared") { _ in monitor.failure == nil }
                #expect(monitor.statistics.reconnects == 1)
            }
        }

        @Test func passingLookupFailuresAreAskedAgainNotPublishedAsUnreachable() async throws {
            let faults = FaultyNetlink()
            try await withMonitoredLab(Self.configuration(faults), setUp: { try await $0.configureIPv4() }) {
                lab, monitor, recorder in
                try await recorder.latest("reachable") { $0.isReachable }
                let before = recorder.count
                // Three tries per reading fail: that reading is skipped and asked again shortly.
                faults.failLookups(4, with: EBUSY)
                try await lab.monitored.ip("address", "add", "198.18.0.3/24", "dev", "v0")
                try await recorder.latest("the change, once the lookup answers") {
                    $0.interface(named: "v0")?.addresses.contains("198.18.0.3/24") == true
                }
                let states = recorder.statuses.dropFirst(before).map(\.state.rawValue)
                #expect(states.allSatisfy { $0 == "reachable" }, "published: \(states)")
                #expect(monitor.statistics.transientLookupFailures >= 4)
                #expect(monitor.statistics.reconnects == 0, "a busy lookup is not a broken socket")
                #expect(faults.injected == 4)
            }
        }

        @Test func networkChangesArriveForEveryBatchEvenWithoutADocumentChange() async throws {
            try await withMonitoredLab(setUp: { try await $0.configureIPv4() }) { lab, monitor, recorder in
                try await recorder.latest("reachable") { $0.isReachable }
                let (stream, continuation) = AsyncStream.makeStream(of: NetworkChange.self)
                let observer = monitor.observeNetworkChanges { continuation.yield($0) }
                var changes = stream.makeAsyncIterator()
                let sequence = monitor.current.sequence
                // A more specific route changes no field of the document, but it is a change.
                try await lab.monitored.ip("route", "add", "198.18.5.0/24", "via", VethLab.gateway)
                let change = await changes.next()
                #expect(change != nil)
                #expect(monitor.current.sequence == sequence, "the document did not change")
                monitor.removeNetworkChangeObserver(observer)
                monitor.close()
                #expect(monitor.observeNetworkChanges { _ in } == nil, "a closed monitor takes no observer")
            }
        }
    }
}
