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
        let rounded = date.addingTimeInterval(0.000_5)
        guard let fields = Fields(rounded) else { return style.format(rounded) }
        return String(unsafeUninitializedCapacity: Fields.length) { fields.write(into: $0) }
    }

    /// `format(date)` quoted into `buffer` (`Fields.length` + 2 bytes), without a `String`, for a
    /// time the arithmetic covers; `false` (nothing written) for one only Foundation writes.
    func writeQuoted(_ date: Date, into buffer: UnsafeMutableBufferPointer<UInt8>) -> Bool {
        guard let fields = Fields(date.addingTimeInterval(0.000_5)) else { return false }
        buffer[0] = UInt8(ascii: "\"")
        _ = fields.write(into: UnsafeMutableBufferPointer(rebasing: buffer[1...]))
        buffer[Fields.length + 1] = UInt8(ascii: "\"")
        return true
    }

    /// A time reachd writes (2001 to 2200, where Foundation's calendar is the proleptic Gregorian
    /// one and a `Double` holds the microseconds) taken apart by arithmetic alone: Foundation's
    /// calendar was much of the time to encode a fleet's document (docs/scale.md). `nil` outside,
    /// for Foundation to write. Counted from 2001 as a `Date` stores it and cut as Foundation cuts:
    /// the same digits (checked against it in `TimestampTests`).
    struct Fields {
        static let length = 24  // 2026-11-21T22:00:00.123Z
        var year, month, day, secondOfDay, milliseconds: Int

        init?(_ date: Date) {
            let interval = date.timeIntervalSinceReferenceDate
            guard interval >= 0, interval < 6_311_433_600 else { return nil }
            let seconds = interval.rounded(.down)
            milliseconds = min(Int((interval - seconds) * 1000), 999)
            let (sinceReference, secondOfDay) = Int(seconds).quotientAndRemainder(dividingBy: 86_400)
            self.secondOfDay = secondOfDay
            // Howard Hinnant's civil_from_days, from 1970 (2001-01-01 is its day 11,323).
            let z = sinceReference + 11_323 + 719_468
            let era = z / 146_097
            let dayOfEra = z - era * 146_097
            let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
            let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
            let shiftedMonth = (5 * dayOfYear + 2) / 153
            day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
            month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
            year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        }

        /// Writes the 24 bytes; returns how many.
        func write(into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
            func put(_ value: Int, _ digits: Int, at offset: Int) {
                var value = value
                for index in stride(from: offset + digits - 1, through: offset, by: -1) {
                    buffer[index] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
            }
            put(year, 4, at: 0)
            buffer[4] = UInt8(ascii: "-")
            put(month, 2, at: 5)
            buffer[7] = UInt8(ascii: "-")
            put(day, 2, at: 8)
            buffer[10] = UInt8(ascii: "T")
            put(secondOfDay / 3600, 2, at: 11)
            buffer[13] = UInt8(ascii: ":")
            put(secondOfDay / 60 % 60, 2, at: 14)
            buffer[16] = UInt8(ascii: ":")
            put(secondOfDay % 60, 2, at: 17)
            buffer[19] = UInt8(ascii: ".")
            put(milliseconds, 3, at: 20)
            buffer[23] = UInt8(ascii: "Z")
            return Self.length
        }
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
