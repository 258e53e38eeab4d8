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
/// the same shape: `@Option(Settings.targets) var targets: [TargetSpec] = []` parses each
/// occurrence on its own (`flagParse`: one element, spaces and all, where the variable's `parse`
/// splits), and `resolve(flags.isEmpty ? nil : flags)`, so that without the flag the variable and
/// the default apply as for every other option.
///
/// `parse` either gives a value or says why not: most settings refuse with their fixed `invalid`
/// text; one whose values each need their own message (a `--target` spec, say) throws it.
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
    /// Text to a valid value, or why it is not one: type and range in one place.
    let parse: @Sendable (String) throws(InvalidValue) -> Value
    /// A flag's text to a value, when it is not read as the variable's is (`parse`).
    let flagParse: (@Sendable (String) throws(InvalidValue) -> Value)?

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
        self.init(
            flag, environment: environment, summary, default: defaultValue, defaultText: defaultText,
            invalid: invalid,
            reasoning: { text throws(InvalidValue) in
                guard let value = parse(text) else { throw InvalidValue(description: invalid) }
                return value
            },
            show: show
        )
    }

    /// A setting whose refusals each say what is wrong with that text (a `--target` spec that is
    /// malformed in one of a dozen ways); `invalid` is then only the general rule.
    ///
    /// - Parameters:
    ///   - reasoning: Text to a value, or the reason shown after the flag or variable.
    ///   - eachFlag: A flag's text to a value, when it differs from `reasoning` (a repeatable
    ///     option's occurrence is one element; its variable holds a list).
    init(
        _ flag: String,
        environment: String? = nil,
        _ summary: String,
        default defaultValue: Value,
        defaultText: String? = nil,
        invalid: String,
        reasoning parse: @escaping @Sendable (String) throws(InvalidValue) -> Value,
        eachFlag flagParse: (@Sendable (String) throws(InvalidValue) -> Value)? = nil,
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
        self.flagParse = flagParse
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
        guard let text = environmentText else { return nil }
        do {
            return try parse(text)
        } catch {
            throw ValidationError("\(environment)=\(text) is invalid for --\(self.flag): \(error)")
        }
    }

    /// The variable's text, `nil` when unset or empty.
    var environmentText: String? {
        guard let text = ProcessInfo.processInfo.environment[environment], !text.isEmpty else { return nil }
        return text
    }

    /// Where a value came from, for a message about it: `--flag` when the flag was given, else the
    /// variable.
    func source(flagGiven: Bool) -> String {
        flagGiven || environmentText == nil ? "--\(flag)" : "\(environment) (--\(flag))"
    }

    /// The flag's value if given, else the environment's, else the default.
    func resolve(_ flag: Value?) throws -> Value {
        try value(flag) ?? defaultValue
    }

    /// The flag's text to a value, for ArgumentParser: it reports the error with the flag.
    func parseFlag(_ text: String) throws -> Value {
        try (flagParse ?? parse)(text)
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

    /// `@Option(Settings.targets) var targets: [TargetSpec] = []` — a repeatable option: each
    /// occurrence is one element, parsed by the list setting's `parseFlag`; empty when absent, so
    /// `setting.resolve(flags.isEmpty ? nil : flags)` falls back to the variable and the default.
    init<T>(wrappedValue: [T], _ setting: Setting<[T]>) where Value == [T] {
        self.init(
            wrappedValue: wrappedValue, name: .customLong(setting.flag), help: setting.help,
            transform: { text in
                let elements = try setting.parseFlag(text)
                guard elements.count == 1, let element = elements.first else {
                    throw InvalidValue(description: "give one value per --\(setting.flag)")
                }
                return element
            }
        )
    }
}

extension Flag where Value == Bool {
    /// `@Flag(Settings.perUplink) var perUplink = false` — an on/off switch; absent, its variable
    /// (`true`/`false`, `1`/`0`, `yes`/`no`, `on`/`off`) or the default decides: `resolveSwitch`.
    init(wrappedValue: Bool, _ setting: Setting<Bool>) {
        self.init(wrappedValue: wrappedValue, name: .customLong(setting.flag), help: setting.help)
    }
}

extension Setting where Value == Bool {
    /// A switch: the words its variable takes.
    init(switch flag: String, _ summary: String) {
        self.init(
            flag, summary, default: false, defaultText: "off", invalid: "must be true or false (1/0, yes/no, on/off)",
            parse: { text in
                switch text.lowercased() {
                case "true", "1", "yes", "on": true
                case "false", "0", "no", "off": false
                default: nil
                }
            })
    }

    /// On when the flag is given, else as the variable says, else off.
    func resolveSwitch(_ given: Bool) throws -> Bool {
        given ? true : try resolve(nil)
    }
}
