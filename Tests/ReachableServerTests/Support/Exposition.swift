/// `/metrics`' text format, read back: samples by `name{labels}` exactly as written, HELP and TYPE
/// by family.
struct Exposition {
    var samples: [String: Double] = [:]
    var help: [String: String] = [:]
    var type: [String: String] = [:]

    init(_ bytes: [UInt8]) {
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            if line.hasPrefix("# HELP ") {
                let rest = line.dropFirst(7)
                let space = rest.firstIndex(of: " ")!
                help[String(rest[..<space])] = String(rest[rest.index(after: space)...])
            } else if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                type[String(parts[2])] = String(parts[3])
            } else {
                let space = line.lastIndex(of: " ")!
                samples[String(line[..<space])] = Double(line[line.index(after: space)...])
            }
        }
    }

    /// The value of one series; labels in the order they are written.
    subscript(_ name: String, _ labels: [(String, String)] = []) -> Double? {
        let rendered = labels.isEmpty ? "" : "{" + labels.map { "\($0)=\"\($1)\"" }.joined(separator: ",") + "}"
        return samples[name + rendered]
    }

    /// Every series of a family (histogram parts included).
    func series(of family: String) -> [String] {
        samples.keys.filter { $0 == family || $0.hasPrefix(family + "{") || $0.hasPrefix(family + "_") }
    }
}
