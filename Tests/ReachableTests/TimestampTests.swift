import FoundationEssentials
import Reachable
import Testing

/// The document's times: written by arithmetic from 2001 to 2200 (`Timestamp.Fields`), by
/// Foundation outside. Both must give the same text for every time, so each check compares with
/// Foundation's ISO 8601 style on the same rounded time.
struct TimestampTests {
    private static let foundation = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    private let style = ReachabilityStatus.timestampStyle

    /// What Foundation writes for `date` (rounded to the nearest millisecond, as `format` does).
    private func expected(_ date: Date) -> String {
        Self.foundation.format(date.addingTimeInterval(0.000_5))
    }

    /// The JSON writer's path: the same digits, quoted.
    private func quoted(_ date: Date) -> String {
        String(decoding: JSONWriter.bytes(capacity: 64) { $0.timestamp(date, style) }, as: UTF8.self)
    }

    @Test(arguments: [
        0.0,  // 2001-01-01T00:00:00.000Z, where the arithmetic begins
        -0.000_5, -0.000_6, -1,  // just before: Foundation's
        0.000_499_9, 0.000_5, 86_399.999_5, 86_400,  // rounding across a millisecond, a day
        3_114_720_000,  // 2099-09-15: the century's leap-year rules ahead
        5_049_187_199.999, 5_049_187_200,  // 2160-12-31 and the leap day after
        6_311_433_599.999_4, 6_311_433_599.999_5, 6_311_433_600,  // the end of 2200 and past it
        849_000_000_000, -62_000_000_000,  // far out: Foundation's
    ])
    func aTimeIsWrittenAsFoundationWritesIt(sinceReference: Double) {
        let date = Date(timeIntervalSinceReferenceDate: sinceReference)
        #expect(style.format(date) == expected(date))
        #expect(quoted(date) == "\"\(expected(date))\"")
    }

    @Test func randomTimesAndMillisecondEdgesAreWrittenAsFoundationWritesThem() {
        var generator = SystemRandomNumberGenerator()
        var mismatches: [Double] = []
        for _ in 0..<50_000 {
            let anywhere = Double.random(in: -1_000_000..<6_400_000_000, using: &generator)
            // A time a hair either side of a whole or half millisecond, where cutting and rounding differ.
            let milliseconds = Double(Int.random(in: 700_000_000_000..<900_000_000_000, using: &generator))
            let edge =
                milliseconds / 1000 + [0, 0.000_5].randomElement(using: &generator)!
                + Double.random(in: -0.000_002..<0.000_002, using: &generator)
            for sinceReference in [anywhere, edge] {
                let date = Date(timeIntervalSinceReferenceDate: sinceReference)
                if style.format(date) != expected(date) || quoted(date) != "\"\(expected(date))\"" {
                    mismatches.append(sinceReference)
                }
            }
        }
        #expect(mismatches.isEmpty, "written otherwise than Foundation writes them: \(mismatches.prefix(5))")
    }
}
