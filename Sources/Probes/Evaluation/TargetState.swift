/// A target's `state` in the status document.
public enum TargetState: String, Sendable, Hashable, CaseIterable {
    /// Not yet evaluated.
    case unknown
    case reachable
    case unreachable
}
