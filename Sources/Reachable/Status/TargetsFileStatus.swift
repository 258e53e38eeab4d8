public import FoundationEssentials

/// The targets file as the document shows it: which file, when a good read of it was last
/// applied, and why the last read was not (so a typo shows where people look, not only in logs).
public struct TargetsFileStatus: Sendable, Equatable, Decodable {
    public var path: String
    /// When a read of the file was last applied (the first one, at start, at least).
    public var appliedAt: Date
    /// Why the last read was not applied (`line 3: invalid target "oops"`); `nil` once one is.
    public var error: String?

    public init(path: String, appliedAt: Date, error: String? = nil) {
        self.path = path
        self.appliedAt = appliedAt
        self.error = error
    }
}
