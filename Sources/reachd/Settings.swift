import ArgumentParser
import FoundationEssentials

/// Resolves an option: the flag if given, else its `REACHD_*` environment variable, else the
/// default. A malformed environment value is an error, not silently ignored.
enum Setting {
    static func resolve<Value>(
        _ flag: Value?, env name: String, default fallback: Value, parse: (String) -> Value?
    ) throws -> Value {
        if let flag { return flag }
        guard let text = ProcessInfo.processInfo.environment[name], !text.isEmpty else { return fallback }
        guard let value = parse(text) else {
            throw ValidationError("\(name)=\(text) is not a valid value")
        }
        return value
    }

    static func resolve(_ flag: String?, env name: String, default fallback: String) throws -> String {
        try resolve(flag, env: name, default: fallback) { $0 }
    }

    static func resolve(_ flag: Int?, env name: String, default fallback: Int) throws -> Int {
        try resolve(flag, env: name, default: fallback) { Int($0) }
    }

    static func resolve(_ flag: Double?, env name: String, default fallback: Double) throws -> Double {
        try resolve(flag, env: name, default: fallback) { Double($0) }
    }
}
