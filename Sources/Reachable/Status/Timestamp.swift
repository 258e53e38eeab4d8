public import FoundationEssentials

/// The document's times: milliseconds and a `Z`, as in the contract's example
/// (`2026-11-21T22:00:00.123Z`), to the nearest millisecond.
///
/// Foundation's ISO 8601 style cuts the fraction off instead of rounding it, and a time read back
/// from the document is the nearest `Double`, often just below its millisecond: `.063` printed
/// again as `.062`. So `reachd status` showed times a millisecond earlier than served. Half a
/// millisecond added before the cut makes both exact.
public struct Timestamp: Sendable {
    private let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// The times written with RFC 3339's four-digit year, 0000 to 9999, once in UTC and rounded.
    /// A time outside would be written `-0001-12-31T23:00:00.000Z` (`0000-01-01T00:00:00+01:00`
    /// read back) or `10000-…`, which this parser and RFC 3339 refuse: `reachd status` would
    /// print such a time, and the document would not survive its own encoder (found by
    /// FuzzClient). The bounds are 0000-01-01 and 10000-01-01 as this style reads them (its
    /// calendar is Julian before 1582, so year 0000 starts two days before the proleptic
    /// Gregorian one), less the half millisecond `format` adds.
    private static let fourDigitYears =
        Date(timeIntervalSince1970: -62_167_392_000 - 0.000_5)..<Date(timeIntervalSince1970: 253_402_300_800 - 0.000_5)

    public init() {}

    public func format(_ date: Date) -> String {
        style.format(date.addingTimeInterval(0.000_5))
    }

    /// An RFC 3339 time; refused when it does not fall in a four-digit year in UTC.
    public func parse(_ text: String) throws -> Date {
        let date = try style.parse(text)
        guard Self.fourDigitYears.contains(date) else {
            throw Failure(description: "\(text) is outside the years 0000 to 9999 in UTC")
        }
        return date
    }

    /// A time the document cannot hold.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }
}
