import ArgumentParser
import FoundationEssentials

/// One option of `reachd`, declared once: its flag, its `REACHD_*` environment variable, its
/// default, its help summary and what counts as a valid value. The `@Option` (through
/// `Option.init(_:)`) and the resolution both read from it, so the help text cannot drift from
/// what the program does. Every option lives in `Settings`.
///
/// A value is the flag if given, else the environment variable if set and not empty, else the
/// default. Flag and environment text go through the same `parse`, so both accept the same
/// values; a malformed environment value is an error naming the variable, never ignored.
///
/// A list is a `Setting<[T]>` whose `parse` splits the text (`--metered-interfaces` on commas).
/// A repeatable option such as `--target NAME=URL` (env `REACHD_TARGETS`, space-separated) fits
/// the same shape: an `Option` initializer for `Setting<[T]>` that parses each occurrence with
/// `parse`, and `resolve(flags.isEmpty ? nil : flags)`, so that without the flag the variable
/// and the default apply as for every other option.
struct Setting<Value: Sendable>: Sendable {
    /// The long flag without its dashes, such as `max-connections`.
    let flag: String
    /// Such as `REACHD_MAX_CONNECTIONS`.
    let environment: String
    /// What the option does, without the `(env: …, default: …)` that `help` adds.
    let summary: String
    /// The value when neither the flag nor the environment gives one.
    let defaultValue: Value
    /// How the default reads in the help; `nil` shows none (an empty list, say).
    let defaultText: String?
    /// Why a text was refused, after the flag or variable: "must be 1...64".
    let invalid: String
    /// Text to a valid value, or `nil`: type and range in one place.
    let parse: @Sendable (String) -> Value?

    /// - Parameters:
    ///   - flag: The long flag without dashes; the variable is derived from it unless given.
    ///   - summary: What the option does, without a final period.
    ///   - defaultValue: Taken from the configuration type's own default where there is one.
    ///   - defaultText: How the default reads in the help, when `show` does not say it right.
    ///   - invalid: What a valid value is, shown when a text is refused.
    ///   - parse: Text to a value, or `nil` when the text is not a valid value.
    ///   - show: How a value reads in the help.
    init(
        _ flag: String,
        environment: String? = nil,
        _ summary: String,
        default defaultValue: Value,
        defaultText: String? = nil,
        invalid: String,
        parse: @escaping @Sendable (String) -> Value?,
        show: (Value) -> String = { "\($0)" }
    ) {
        self.flag = flag
        self.environment = environment ?? "REACHD_" + flag.uppercased().replacing("-", with: "_")
        self.summary = summary
        self.defaultValue = defaultValue
        let shown = defaultText ?? show(defaultValue)
        self.defaultText = shown.isEmpty ? nil : shown
        self.invalid = invalid
        self.parse = parse
    }

    /// The summary with the variable and default appended, as `reachd --help` shows it.
    var help: ArgumentHelp {
        let fallback = defaultText.map { ", default: \($0)" } ?? ""
        return ArgumentHelp("\(summary) (env: \(environment)\(fallback)).", valueName: flag)
    }

    /// The flag's value if given, else the environment's, else `nil`: for a caller whose default
    /// depends on the use (`--host` serves on all addresses but asks loopback).
    func value(_ flag: Value?) throws -> Value? {
        if let flag { return flag }
        guard let text = ProcessInfo.processInfo.environment[environment], !text.isEmpty else { return nil }
        guard let value = parse(text) else {
            throw ValidationError("\(environment)=\(text) is invalid for --\(self.flag): \(invalid)")
        }
        return value
    }

    /// The flag's value if given, else the environment's, else the default.
    func resolve(_ flag: Value?) throws -> Value {
        try value(flag) ?? defaultValue
    }

    /// The flag's text to a value, for ArgumentParser: it reports the error with the flag.
    func parseFlag(_ text: String) throws -> Value {
        guard let value = parse(text) else { throw InvalidValue(description: invalid) }
        return value
    }
}

/// A flag's text that `Setting.parse` refused; ArgumentParser shows `description` after
/// "The value 'x' is invalid for '--flag <flag>': ".
struct InvalidValue: Error, CustomStringConvertible {
    let description: String
}

extension Option {
    /// `@Option(Settings.threads) var threads: Int?` — the flag, help and parsing of a setting;
    /// `nil` when the flag is absent, so `Setting.resolve` can fall back.
    init<T>(_ setting: Setting<T>) where Value == T? {
        self.init(name: .customLong(setting.flag), help: setting.help, transform: { try setting.parseFlag($0) })
    }
}
