import FoundationEssentials

/// What `reachd check` prints about a health answer (`/readyz`, `/livez`): one line per failing
/// check, with the state it observed and why it fails, so a probe's log says what is wrong.
package enum HealthText {
    /// One check of an `application/health+json` body; only the fields printed.
    struct Check: Decodable {
        var status: String
        var observedValue: String?
        var output: String?
    }

    struct Document: Decodable {
        var status: String
        var checks: [String: [Check]]?
    }

    /// `  target:db unreachable: target db is unreachable (no-route)`, one per failing check, by
    /// name (a JSON object's order does not survive decoding); empty when the body is not a
    /// health document.
    package static func failingChecks(_ body: [UInt8]) -> [String] {
        guard let document = try? JSONDecoder().decode(Document.self, from: Data(body)) else { return [] }
        var lines: [String] = []
        for (name, checks) in (document.checks ?? [:]).sorted(by: { $0.key < $1.key }) {
            for check in checks where check.status != "pass" {
                var line = "  \(name) \(check.observedValue ?? check.status)"
                if let output = check.output { line += ": \(output)" }
                lines.append(StatusText.visible(line))
            }
        }
        return lines
    }

    /// The document's overall `status` (`pass`, `fail`, `warn`), if the body is one.
    package static func status(_ body: [UInt8]) -> String? {
        (try? JSONDecoder().decode(Document.self, from: Data(body)))?.status
    }
}
