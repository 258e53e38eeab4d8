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

    public init() {}

    public func format(_ date: Date) -> String {
        style.format(date.addingTimeInterval(0.000_5))
    }

    public func parse(_ text: String) throws -> Date {
        try style.parse(text)
    }
}
