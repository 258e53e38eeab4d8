import Reachable

/// The kinds of value most options take, each with its parsing and its refusal in one place.
extension Setting where Value: LosslessStringConvertible & Comparable {
    /// A number for which `isValid` holds; `invalid` says which.
    init(
        _ flag: String,
        _ summary: String,
        default defaultValue: Value,
        invalid: String,
        where isValid: @escaping @Sendable (Value) -> Bool
    ) {
        self.init(
            flag, summary, default: defaultValue, invalid: invalid,
            parse: { text in Value(text).flatMap { isValid($0) ? $0 : nil } },
            show: Self.numberText
        )
    }

    /// A number in `range`, such as `1...64`.
    init(
        _ flag: String, _ summary: String, default defaultValue: Value, in range: ClosedRange<Value>, unit: String = ""
    ) {
        let bounds = "\(Self.numberText(range.lowerBound))...\(Self.numberText(range.upperBound))"
        self.init(flag, summary, default: defaultValue, invalid: "must be \(bounds)\(unit)") { range.contains($0) }
    }

    /// A number of at least `range.lowerBound`, such as `1...`.
    init(
        _ flag: String, _ summary: String, default defaultValue: Value, in range: PartialRangeFrom<Value>,
        unit: String = ""
    ) {
        let bound = Self.numberText(range.lowerBound)
        self.init(flag, summary, default: defaultValue, invalid: "must be at least \(bound)\(unit)") {
            range.contains($0)
        }
    }

    /// `15`, not `15.0`: how a person writes a whole number of seconds.
    fileprivate static func numberText(_ value: Value) -> String {
        let text = "\(value)"
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }
}

extension Setting where Value: RawRepresentable & CaseIterable, Value.RawValue == String {
    /// One of `Value`'s cases by its raw value; the help lists them after `summary`.
    ///
    /// - Parameter parse: Text to a case, when it is not simply `Value(rawValue:)`.
    init(
        _ flag: String,
        _ summary: String,
        default defaultValue: Value,
        parse: @escaping @Sendable (String) -> Value? = { Value(rawValue: $0) }
    ) {
        let names = Value.allCases.map(\.rawValue)
        let choices = names.dropLast().joined(separator: ", ") + (names.count > 1 ? " or " : "") + (names.last ?? "")
        self.init(
            flag, "\(summary): \(names.joined(separator: " | "))", default: defaultValue,
            invalid: "must be \(choices)", parse: parse, show: \.rawValue
        )
    }
}

extension Setting where Value == Double {
    /// A number of seconds: any positive number is taken (the contract's rule for every interval
    /// and timeout) and anything else refused. What reachd can honour is `usable`: a value
    /// beyond it counts as its nearer bound (said in the help), so no positive number is refused,
    /// none overflows a timer and none spins a loop.
    init(_ flag: String, _ summary: String, default defaultValue: Value, seconds usable: ClosedRange<Value>) {
        let lower = Self.numberText(usable.lowerBound)
        let upper = Self.numberText(usable.upperBound)
        self.init(
            flag, "\(summary) (less than \(lower) counts as \(lower), more than \(upper) as \(upper))",
            default: defaultValue, invalid: "must be a positive number of seconds",
            parse: { text in
                Double(positiveSeconds: text).map { min(max($0, usable.lowerBound), usable.upperBound) }
            },
            show: Self.numberText
        )
    }
}
