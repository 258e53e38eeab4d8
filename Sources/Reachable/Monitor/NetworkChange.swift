/// "The network changed": one drained batch of kernel notifications, whether or not the status
/// document changed with it (a more specific route to a probed host changes no field, yet the
/// probe should run again). Sources that depend on routes re-run on it.
public struct NetworkChange: Sendable, Equatable {
    /// Counts batches since the monitor started: a subscriber that sees 7 after 5 missed one
    /// (its stream keeps only the newest), which for a "re-run now" signal is fine.
    public var batch: UInt64
}
