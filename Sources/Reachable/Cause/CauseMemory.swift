/// What the cause needs that one document does not hold: which interface last carried each
/// family's route out (a family that never had one is not needed: an IPv4-only host's missing
/// IPv6 is no cause), and a web config that was refused (a server concern, not in the document).
/// Kept by the monitor, changed only under its lock.
public struct CauseMemory: Sendable, Equatable {
    /// The interface each family last went out of since reachd started.
    public var lastWayOut: [AddressFamily: String] = [:]
    /// `--web-config-file` and why its last reading was not applied; `nil` while the one read
    /// last is in force.
    public var webConfigRefusal: RefusedFile?

    /// A configuration file whose last reading was not applied, and why.
    public struct RefusedFile: Sendable, Equatable {
        public var file: String
        public var error: String

        public init(file: String, error: String) {
            self.file = file
            self.error = error
        }
    }

    public init(lastWayOut: [AddressFamily: String] = [:], webConfigRefusal: RefusedFile? = nil) {
        self.lastWayOut = lastWayOut
        self.webConfigRefusal = webConfigRefusal
    }

    /// Whether a family has had a usable route out since reachd started.
    public func needs(_ family: AddressFamily) -> Bool { lastWayOut[family] != nil }

    /// Takes in a reading of the kernel: each family with a way out remembers its interface.
    public mutating func remember(_ facts: PathFacts) {
        for family in AddressFamily.allCases {
            if let name = facts.interface(of: family) { lastWayOut[family] = name }
        }
    }
}
