import Reachable
import Testing

/// The one conversion of a duration to seconds and milliseconds (options, logs, C timeouts).
@Suite struct DurationTextTests {
    @Test func secondsAsANumberAndAsAPersonWritesThem() {
        #expect(Duration.milliseconds(1500).inSeconds == 1.5)
        #expect(Duration.seconds(10).inSeconds == 10)
        #expect(Duration.seconds(2).secondsText == "2")
        #expect(Duration.milliseconds(500).secondsText == "0.5")
        #expect(Duration.microseconds(1500).secondsText == "0.001", "to the millisecond")
    }

    @Test func millisecondsRoundUpSoAShortWaitIsNeverZero() {
        #expect(Duration.microseconds(1).roundedUpMilliseconds == 1)
        #expect(Duration.milliseconds(2).roundedUpMilliseconds == 2)
        #expect(Duration.microseconds(2001).roundedUpMilliseconds == 3)
        #expect(Duration.zero.roundedUpMilliseconds == 0)
        #expect(Duration.milliseconds(-5).roundedUpMilliseconds == 0)
    }

    /// What every interval and timeout option takes: a positive, finite number.
    @Test func secondsAreReadAsAPositiveFiniteNumber() {
        #expect(Double(positiveSeconds: "2") == 2)
        #expect(Double(positiveSeconds: "0.5") == 0.5)
        #expect(Double(positiveSeconds: "1e-3") == 0.001)
        for refused in ["0", "-1", "-0.05", "inf", "nan", "1e400", "ten", "2s", " 2", ""] {
            #expect(Double(positiveSeconds: refused) == nil, "\(refused)")
        }
    }
}
