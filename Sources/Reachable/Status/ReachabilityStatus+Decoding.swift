import FoundationEssentials

/// Reading the wire document back, for the client commands (`reachd status`, `watch`), the fuzz
/// targets and the tests that check the encoder. Writing has one implementation only: `jsonBytes()`.
///
/// Every type of the document is the compiler's synthesised `Decodable`: its stored properties are
/// the contract's fields by name — all but a target's and a connectivity check's
/// `unresolvedFamilies`, reachd's own, which their `CodingKeys` leave out (read back, empty). What
/// is decoded here, once, is the document's time: a string in `timestampStyle` (a plain
/// `JSONDecoder` reads a `Date` as a number, so decode through this).
///
/// Every field the document has is required, as reachd has written it since `stateSince` (optional
/// ones are `null`, never absent): documents of the pre-release builds from before the targets,
/// connectivity, DNS, `degraded` and `stateSince` existed are refused rather than filled in with
/// guessed defaults, which would have needed a hand-written decoder for each type.
extension ReachabilityStatus {
    public init(jsonBytes: some Sequence<UInt8>) throws {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            do {
                return try Self.timestampStyle.parse(text)
            } catch {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "\(error)")
            }
        }
        self = try decoder.decode(Self.self, from: Data(jsonBytes))
    }
}
