import Reachable
import Testing

@testable import Probes

/// The probe engine defers its results and publishes each turn's as one document
/// (`NetworkMonitor.update(ifEpoch:deferred:)`, `publishDeferred`): the monitor on the host's
/// kernel, its targets edited as a probe's record would.
@Suite(.timeLimit(.minutes(1)))
struct DeferredPublicationTests {
    let monitor: NetworkMonitor

    init() throws {
        let probes = try ProbeSourcesTests.configuration(["a=host://127.0.0.1", "b=host://127.0.0.1"])
        monitor = try ProbeSourcesTests.monitor(listing: probes)
    }

    private func reachable(_ name: String) -> (inout ReachabilityStatus) -> Void {
        { document in
            guard let index = document.targets.firstIndex(where: { $0.name == name }) else { return }
            document.targets[index].state = .reachable
        }
    }

    @Test func deferredResultsAreOneDocumentWhenPublished() {
        defer { monitor.close() }
        let before = monitor.current
        let epoch = monitor.networkEpoch
        #expect(monitor.update(ifEpoch: epoch, deferred: true, reachable("a")))
        #expect(monitor.update(ifEpoch: epoch, deferred: true, reachable("b")))
        #expect(monitor.current.sequence == before.sequence, "nothing published yet")
        monitor.publishDeferred()
        let after = monitor.current
        #expect(after.sequence == before.sequence + 1, "one document for both")
        #expect(after.targets.map(\.state) == [.reachable, .reachable])
        monitor.publishDeferred()
        #expect(monitor.current.sequence == after.sequence, "nothing left to publish")
    }

    @Test func anyPublicationCarriesWhatWasDeferred() {
        defer { monitor.close() }
        let before = monitor.current
        #expect(monitor.update(ifEpoch: monitor.networkEpoch, deferred: true, reachable("a")))
        monitor.update(reachable("b"))
        #expect(monitor.current.sequence == before.sequence + 1)
        #expect(monitor.current.targets.map(\.state) == [.reachable, .reachable])
    }

    @Test func aStaleDeferredResultIsNotApplied() {
        defer { monitor.close() }
        let before = monitor.current
        #expect(!monitor.update(ifEpoch: monitor.networkEpoch + 1, deferred: true, reachable("a")))
        monitor.publishDeferred()
        #expect(monitor.current.sequence == before.sequence)
    }

    @Test func nothingIsPublishedAfterClose() {
        #expect(monitor.update(ifEpoch: monitor.networkEpoch, deferred: true, reachable("a")))
        monitor.close()
        let closed = monitor.current
        monitor.publishDeferred()
        #expect(monitor.current == closed, "the last value stays as it was")
    }
}
