/// The one conversion of a `Duration` to what options, logs and C APIs take, and the one reading
/// of seconds as options write them, so seconds are read and written the same way everywhere.
extension Duration {
    /// Seconds as a floating-point number (`--target-interval 0.5`, JSON log fields).
    public var inSeconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) / 1e18
    }

    /// Whole milliseconds, rounded up so a short wait never becomes a busy loop of zero timeouts
    /// (`poll`, c-ares, libcurl); 0 for a duration that is not positive.
    public var roundedUpMilliseconds: Int64 {
        guard self > .zero else { return 0 }
        let (whole, attoseconds) = components
        return whole * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
    }

    /// `2`, `0.5`: how a person writes a pause (to the millisecond).
    public var secondsText: String {
        let (whole, attoseconds) = components
        let milliseconds = attoseconds / 1_000_000_000_000_000
        return milliseconds == 0 ? "\(whole)" : "\(Double(whole) + Double(milliseconds) / 1000)"
    }
}

extension Double {
    /// A positive, finite number of seconds as a person writes one (`2`, `0.5`, `1e-3`): every
    /// interval and timeout option. `nil` for anything else (`0`, `-1`, `inf`, `nan`, `2s`): `inf`
    /// seconds once crashed reachd at start.
    package init?(positiveSeconds text: String) {
        guard let value = Double(text), value > 0, value.isFinite else { return nil }
        self = value
    }
}
