import CProbeLibraries
import FoundationEssentials
import Glibc
import Reachable
import Testing

@testable import Probes

/// The words a failed probe leaves in the document (`detail`): short, and the same for the same
/// kind of failure, since a change of `detail` alone is a change of the document.
@Suite struct FailureDetailTests {
    private static func transfer(
        _ failure: ProbeFailureReason, code: CURLcode = CURLE_OK, status: Int? = nil, errno: Int32 = 0,
        message: String = "", timings: ProbeTimings = ProbeTimings(), tls: Bool = false
    ) -> String {
        FailureDetail.transfer(
            failure, code: code, statusCode: status, socketErrno: errno, message: message, timings: timings,
            usesTLS: tls)
    }

    @Test func anHTTPStatusIsNamed() {
        #expect(Self.transfer(.httpStatus, status: 404) == "HTTP 404")
        #expect(Self.transfer(.httpStatus, status: 503) == "HTTP 503")
    }

    @Test func aConnectFailureNamesTheErrnoAndItsWords() {
        #expect(
            Self.transfer(.refused, code: CURLE_COULDNT_CONNECT, errno: ECONNREFUSED)
                == "ECONNREFUSED: connection refused")
        #expect(
            Self.transfer(.hostUnreachable, code: CURLE_COULDNT_CONNECT, errno: EHOSTUNREACH)
                == "EHOSTUNREACH: no route to host")
        #expect(FailureDetail.errno(ENETUNREACH) == "ENETUNREACH: network is unreachable")
        #expect(FailureDetail.errno(4242).hasPrefix("errno 4242: "))
    }

    @Test func aTimeoutSaysWhichStepDidNotEndAndNoDuration() {
        let message = "Connection timed out after 2001 milliseconds"
        #expect(
            Self.transfer(.timeout, code: CURLE_OPERATION_TIMEDOUT, message: message)
                == "no connection within the timeout")
        let connected = ProbeTimings(connect: .milliseconds(1))
        #expect(
            Self.transfer(.timeout, message: message, timings: connected, tls: true)
                == "no TLS handshake within the timeout")
        #expect(Self.transfer(.timeout, message: message, timings: connected) == "no answer within the timeout")
        let handshaken = ProbeTimings(connect: .milliseconds(1), appConnect: .milliseconds(2))
        #expect(
            Self.transfer(.timeout, message: message, timings: handshaken, tls: true) == "no answer within the timeout")
    }

    @Test func aCertificateProblemIsOpenSSLsVerdictAlone() throws {
        try #require(ProbeLibraries.failure == nil, "libcurl loads (its own words are asked)")
        let expired = Self.transfer(
            .tls, code: CURLE_PEER_FAILED_VERIFICATION, message: "SSL certificate problem: certificate has expired")
        #expect(expired == "certificate has expired")
        #expect(
            Self.transfer(.tls, code: CURLE_SSL_CONNECT_ERROR, message: "")
                == String(cString: reachd_curl_easy_strerror(CURLE_SSL_CONNECT_ERROR)))
    }

    @Test func aDNSFailureNamesTheOutcomeAndTheNameserversAsked() {
        #expect(FailureDetail.dns(status: ARES_ESERVFAIL, servers: ["198.18.0.1"]) == "SERVFAIL from 198.18.0.1")
        #expect(
            FailureDetail.dns(status: ARES_ENOTFOUND, servers: ["198.18.0.1", "2001:db8::53"])
                == "NXDOMAIN from 198.18.0.1, 2001:db8::53")
        #expect(FailureDetail.dns(status: ARES_EREFUSED, servers: []) == "REFUSED")
        #expect(
            FailureDetail.dns(status: ARES_ETIMEOUT, servers: ["198.18.0.1"])
                == "no answer within the timeout from 198.18.0.1")
    }

    @Test func theFailureIsKeptWhileUnreachableAndDroppedOnRecovery() {
        let evaluator = ThresholdEvaluator(failureThreshold: 2, successThreshold: 2)
        let start = Date(timeIntervalSince1970: 0)
        var evaluation = TargetEvaluation.unknown(since: start)
        evaluation = evaluator.next(after: evaluation, failure: nil, at: start)
        evaluation = evaluator.next(
            after: evaluation, failure: .refused, detail: "ECONNREFUSED: connection refused", at: start)
        #expect(evaluation.state == .reachable && evaluation.detail == nil, "a tolerated failure says nothing yet")
        evaluation = evaluator.next(after: evaluation, failure: .httpStatus, detail: "HTTP 404", at: start)
        #expect(evaluation.state == .unreachable && evaluation.detail == "HTTP 404")
        evaluation = evaluator.next(after: evaluation, failure: nil, at: start)
        #expect(evaluation.state == .unreachable && evaluation.detail == "HTTP 404", "one success of two")
        evaluation = evaluator.next(after: evaluation, failure: nil, at: start)
        #expect(evaluation.state == .reachable && evaluation.detail == nil)
    }
}

/// Confirming quickly: 1 s, 2 s, 4 s … while a verdict is in doubt, never later than the interval.
@Suite struct ConfirmationDelayTests {
    @Test func aStoppedServerIsProbedAfterOneThenTwoSecondsThenTheInterval() {
        let evaluator = ThresholdEvaluator(failureThreshold: 3, successThreshold: 2)
        let interval = Duration.seconds(10)
        let start = Date(timeIntervalSince1970: 0)
        var evaluation = evaluator.next(after: .unknown(since: start), failure: nil, at: start)
        #expect(evaluator.confirmationDelay(after: evaluation, interval: interval) == interval, "reachable, steady")
        var delays: [Duration] = []
        for _ in 0..<4 {
            evaluation = evaluator.next(after: evaluation, failure: .refused, at: start)
            delays.append(evaluator.confirmationDelay(after: evaluation, interval: interval))
        }
        #expect(delays == [.seconds(1), .seconds(2), interval, interval])
        #expect(evaluation.state == .unreachable)
        evaluation = evaluator.next(after: evaluation, failure: nil, at: start)
        #expect(evaluation.state == .unreachable)
        #expect(evaluator.confirmationDelay(after: evaluation, interval: interval) == .seconds(1), "one success of two")
        evaluation = evaluator.next(after: evaluation, failure: nil, at: start)
        #expect(evaluation.state == .reachable)
        #expect(evaluator.confirmationDelay(after: evaluation, interval: interval) == interval)
    }

    @Test func aFirstFailureAtStartIsConfirmedTooButNotWithOneFailureAllowed() {
        let start = Date(timeIntervalSince1970: 0)
        let three = ThresholdEvaluator(failureThreshold: 3)
        let failedAtStart = three.next(after: .unknown(since: start), failure: .refused, at: start)
        #expect(failedAtStart.state == .unreachable, "the first result decides at once")
        #expect(three.confirmationDelay(after: failedAtStart, interval: .seconds(30)) == .seconds(1))
        let one = ThresholdEvaluator(failureThreshold: 1)
        #expect(one.confirmationDelay(after: failedAtStart, interval: .seconds(30)) == .seconds(30))
    }

    @Test func anIntervalBelowOneSecondIsNeverExceededAndLongRunsDoNotOverflow() {
        let evaluator = ThresholdEvaluator(failureThreshold: 100)
        var evaluation = TargetEvaluation(state: .reachable, reason: nil, since: Date(), consecutiveFailures: 1)
        #expect(evaluator.confirmationDelay(after: evaluation, interval: .milliseconds(500)) == .milliseconds(500))
        evaluation.consecutiveFailures = 99
        #expect(evaluator.confirmationDelay(after: evaluation, interval: .seconds(30)) == .seconds(30))
    }
}
