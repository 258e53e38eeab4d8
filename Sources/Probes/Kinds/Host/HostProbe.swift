extension TargetURL.Scheme {
    /// The name resolves and the kernel has a route: DNS only.
    public static let host: Self = "host"
}

/// `host://NAME`: resolving and routing is the whole probe; no packet goes to the host.
public enum HostProbe: ProbeKind {
    public static let schemes: [TargetURL.Scheme] = [.host]

    public static func parts(
        _ scheme: TargetURL.Scheme, port: UInt16?, remainder: String
    ) -> Result<(port: UInt16?, path: String), SpecError.Problem> {
        if port != nil { return .failure(.unexpectedPort) }
        if !remainder.isEmpty, remainder != "/" { return .failure(.unexpectedPath) }
        return .success((nil, ""))
    }

    /// A routed address is a success, decided without a packet.
    public static func probe(
        _ job: ProbeJob, on engine: ProbeEngine, completion: @escaping @Sendable (ProbeOutcome) -> Void
    ) -> Bool {
        completion(.succeeded)
        return true
    }
}

extension ProbeOutcome {
    /// A success decided without a packet (`host://`: resolving and routing is all).
    static let succeeded = ProbeOutcome(failure: nil)
}
