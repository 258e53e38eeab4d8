/// Bounds the engine keeps whatever a server sends.
public enum ProbeLimits {
    /// The most of a body the engine ever keeps: enough for any sensible connectivity response
    /// prefix, small enough that a 10 MB answer costs nothing (reading stops there).
    public static let maximumExpectedBody = 4096
}
