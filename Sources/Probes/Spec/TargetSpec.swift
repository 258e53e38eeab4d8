public import Reachable

/// One `--target NAME=URL` (or `NAME@IFACE=URL`, pinned to an interface): a named host whose
/// reachability reachd reports.
public struct TargetSpec: Sendable, Hashable {
    /// 1–63 letters, digits, `_`, `-`, `.`: also a Prometheus label value and a `target:NAME` readiness
    /// condition, so it stays plain.
    public let name: String
    public let url: TargetURL
    /// Its way out: the kernel's choice, or the interface `NAME@IFACE=` pins it to.
    public var egress = Egress.kernelChoice

    /// The spec as it is written: `NAME=URL` or `NAME@IFACE=URL`.
    public var text: String { "\(name)\(egress.interface.map { "@\($0)" } ?? "")=\(url.text)" }

    /// Parses `NAME=URL` or `NAME@IFACE=URL` (split at the first `=`, a URL's query may contain
    /// more; then the name at its first `@`).
    public static func parse(_ spec: String) throws(SpecError) -> TargetSpec {
        func refuse(_ problem: SpecError.Problem) -> SpecError { SpecError(.target, spec: spec, problem: problem) }
        guard let equals = spec.firstIndex(of: "=") else { throw refuse(.missingEquals) }
        let head = spec[..<equals]
        let at = head.firstIndex(of: "@")
        let name = String(head[..<(at ?? head.endIndex)])
        guard isValidName(name) else { throw refuse(.invalidName) }
        var egress = Egress.kernelChoice
        if let at {
            let interface = String(head[head.index(after: at)...])
            guard isValidInterfaceName(interface) else { throw refuse(.invalidInterface) }
            egress = .pinned(to: interface)
        }
        switch TargetURL.parse(String(spec[spec.index(after: equals)...]), allowed: ProbeKinds.schemes) {
        case .success(let url): return TargetSpec(name: name, url: url, egress: egress)
        case .failure(let problem): throw refuse(problem)
        }
    }

    /// An interface name as the contract writes it (and `IFNAMSIZ` bounds it): 1–15 bytes, no
    /// `/`, no whitespace or other control character.
    public static func isValidInterfaceName(_ name: String) -> Bool {
        (1...15).contains(name.utf8.count)
            && name.utf8.allSatisfy { $0 > 0x20 && $0 != 0x7F && $0 != UInt8(ascii: "/") }
    }

    /// Parses every spec in configuration order (the order of the document's `targets`), refusing
    /// the first invalid one and any name used twice. Names are case-sensitive, as Prometheus labels are.
    public static func parseList(_ specs: [String]) throws(SpecError) -> [TargetSpec] {
        var seen = Set<String>()
        var targets: [TargetSpec] = []
        for spec in specs {
            let target = try parse(spec)
            guard seen.insert(target.name).inserted else {
                throw SpecError(.target, spec: spec, problem: .duplicateName)
            }
            targets.append(target)
        }
        return targets
    }

    /// `REACHD_TARGETS`: the same specs separated by spaces (any run of spaces, tabs or newlines,
    /// so a multi-line YAML value works too).
    public static func splitEnvironment(_ value: String) -> [String] {
        value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }).map(String.init)
    }

    static func isValidName(_ name: String) -> Bool {
        (1...63).contains(name.utf8.count)
            && name.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            }
    }
}
