import FoundationEssentials
import Probes
import Reachable
import Testing

/// The `--target-failures` rule, step by step.
@Suite struct ThresholdEvaluatorTests {
    let start = Date(timeIntervalSince1970: 1_000)
    func at(_ seconds: Double) -> Date { start.addingTimeInterval(seconds) }

    /// Feeds results one by one; returns every evaluation.
    func run(_ results: [ProbeFailureReason?], threshold: Int = 3) -> [TargetEvaluation] {
        let evaluator = ThresholdEvaluator(failureThreshold: threshold)
        var current = TargetEvaluation.unknown(since: start)
        var all: [TargetEvaluation] = []
        for (index, result) in results.enumerated() {
            current = evaluator.next(after: current, failure: result, at: at(Double(index + 1)))
            all.append(current)
        }
        return all
    }

    @Test func firstSuccessDecidesAtOnce() {
        let first = run([nil])[0]
        #expect(first.state == .reachable && first.reason == nil && first.since == at(1))
    }

    @Test(arguments: [
        ProbeFailureReason.dns, .timeout, .refused, .hostUnreachable, .httpStatus, .tls, .error, .noRoute,
    ])
    func firstFailureDecidesAtOnce(_ reason: ProbeFailureReason) {
        let first = run([reason])[0]
        #expect(first.state == .unreachable && first.reason == reason && first.since == at(1))
    }

    @Test func reachableTargetTurnsUnreachableOnlyAfterThresholdFailuresInARow() {
        let steps = run([nil, .timeout, .timeout, .timeout])
        #expect(steps.map(\.state) == [.reachable, .reachable, .reachable, .unreachable])
        #expect(steps.map(\.reason) == [nil, nil, nil, .timeout], "no reason while still reachable")
        #expect(steps[2].since == at(1), "failures below the threshold change nothing in the document")
        #expect(steps[3].since == at(4))
    }

    @Test func singleLostProbeDoesNotFlapAtTheDefaultThreshold() {
        let steps = run([nil, .timeout, nil, .timeout, .timeout, nil])
        #expect(steps.allSatisfy { $0.state == .reachable })
        #expect(steps.allSatisfy { $0.since == at(1) })
    }

    @Test func noRouteDecidesAtOnceEvenWhenReachable() {
        let steps = run([nil, .noRoute])
        #expect(steps[1].state == .unreachable && steps[1].reason == .noRoute && steps[1].since == at(2))
        let afterFailures = run([nil, .timeout, .noRoute])
        #expect(afterFailures[2].reason == .noRoute)
    }

    @Test func oneSuccessMakesAnUnreachableTargetReachable() {
        let steps = run([.refused, .refused, nil])
        #expect(steps[2].state == .reachable && steps[2].reason == nil && steps[2].since == at(3))
        #expect(steps[2].consecutiveFailures == 0)
    }

    @Test func unreachableTargetFollowsTheLatestReasonButKeepsSince() {
        let steps = run([.refused, .timeout, .noRoute])
        #expect(steps.map(\.reason) == [.refused, .timeout, .noRoute])
        #expect(steps.allSatisfy { $0.since == at(1) })
    }

    @Test func thresholdOfOneTurnsUnreachableOnTheFirstFailure() {
        let steps = run([nil, .httpStatus], threshold: 1)
        #expect(steps[1].state == .unreachable && steps[1].reason == .httpStatus)
    }

    @Test func failuresCountOnlyInARow() {
        let steps = run([nil, .timeout, .timeout, nil, .timeout, .timeout, .timeout])
        #expect(
            steps.map(\.state) == [
                .reachable, .reachable, .reachable, .reachable, .reachable, .reachable, .unreachable,
            ])
    }
}

/// The connectivity table (docs/probes.md), and NetworkManager's backoff.
@Suite struct ConnectivityEvaluatorTests {
    static func answer(_ status: Int, matched: Bool? = nil) -> ProbeOutcome {
        ProbeOutcome(
            failure: (200...399).contains(status) ? nil : .httpStatus, statusCode: status, bodyPrefixMatched: matched)
    }

    @Test(arguments: [
        (answer(204), ConnectivityStatus.State.full, ProbeFailureReason?.none),
        (answer(204, matched: false), .full, nil),
        (answer(200, matched: true), .full, nil),
        (answer(299, matched: true), .full, nil),
        (answer(200, matched: false), .portal, nil),
        (answer(200), .portal, nil),
        (answer(302), .portal, nil),
        (answer(301, matched: true), .portal, nil),
        (answer(399), .portal, nil),
        (answer(404), .limited, .httpStatus),
        (answer(503, matched: true), .limited, .httpStatus),
        (ProbeOutcome.failed(.noRoute), ConnectivityStatus.State.none, nil),
        (ProbeOutcome.failed(.dns), .limited, .dns),
        (ProbeOutcome.failed(.timeout), .limited, .timeout),
        (ProbeOutcome.failed(.refused), .limited, .refused),
        (ProbeOutcome.failed(.tls), .limited, .tls),
        (ProbeOutcome.failed(.error), .limited, .error),
    ])
    func outcomeClassifies(_ outcome: ProbeOutcome, _ state: ConnectivityStatus.State, _ reason: ProbeFailureReason?) {
        let classified = ConnectivityEvaluator.classify(outcome)
        #expect(classified.state == state)
        #expect(classified.reason == reason)
    }

    @Test func sinceMovesOnlyWhenTheStateChanges() {
        let start = Date(timeIntervalSince1970: 0)
        var status = ConnectivityStatus(state: .unknown, url: "http://check.test/", since: start)
        func check(_ outcome: ProbeOutcome, at now: Date) {
            let (state, reason) = ConnectivityEvaluator.classify(outcome)
            status.ipv4 = ConnectivityFamilyStatus(state: state, reason: reason)
            status.deriveOverall(withoutFamilies: (.unknown, nil), at: now)
        }
        check(.failed(.timeout), at: start + 1)
        #expect((status.state, status.reason, status.since) == (.limited, .timeout, start + 1))
        check(.failed(.dns), at: start + 2)
        #expect((status.state, status.reason, status.since) == (.limited, .dns, start + 1), "reason moves, since not")
        check(Self.answer(204), at: start + 3)
        #expect((status.state, status.reason, status.since) == (.full, nil, start + 3))
    }

    @Test func backoffDoublesFromOneSecondUpToTheIntervalWhileNotFull() {
        var schedule = ConnectivitySchedule(interval: .seconds(20))
        let delays = [ConnectivityStatus.State.limited, .limited, .portal, .limited, .none, .limited, .limited].map {
            schedule.delay(after: $0)
        }
        #expect(delays == [1, 2, 4, 8, 16, 20, 20].map { Duration.seconds($0) })
        #expect(schedule.delay(after: .full) == .seconds(20))
        #expect(schedule.delay(after: .limited) == .seconds(1), "full resets the backoff")
        #expect(schedule.delay(after: .limited) == .seconds(2))
        schedule.reset()
        #expect(schedule.delay(after: .portal) == .seconds(1), "a network change starts again from 1 s")
    }

    @Test func intervalShorterThanOneSecondCapsTheBackoff() {
        var schedule = ConnectivitySchedule(interval: .milliseconds(500))
        #expect(schedule.delay(after: .limited) == .milliseconds(500))
        #expect(schedule.delay(after: .limited) == .milliseconds(500))
    }
}
