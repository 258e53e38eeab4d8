/// One header line, as received or as sent.
struct HTTPField: Sendable, Equatable {
    var name: String
    var value: String

    init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

extension [HTTPField] {
    /// The first value of the header `name`; header names are case-insensitive (RFC 9110).
    func value(of name: String) -> String? {
        first { $0.name.lowercased() == name.lowercased() }?.value
    }
}
