import Reachable

extension TargetURL.Scheme {
    /// ICMP echo requests: loss, round trips and the path MTU besides reachability.
    public static let icmp: Self = "icmp"
}

/// `icmp://HOST`: small echo requests and one full-size echo (`ICMPEchoes`, on the engine loop),
/// over an unprivileged ICMP socket where `ping_group_range` allows it, else a raw one.
public enum ICMPProbe: ProbeKind {
    public static let schemes: [TargetURL.Scheme] = [.icmp]

    public static func parts(
        _ scheme: TargetURL.Scheme, port: UInt16?, remainder: String
    ) -> Result<(port: UInt16?, path: String), SpecError.Problem> {
        guard port == nil else { return .failure(.unexpectedPort) }
        if !remainder.isEmpty, remainder != "/" { return .failure(.unexpectedPath) }
        return .success((nil, ""))
    }

    /// Refused at start, not found at the first probe: neither kind of ICMP socket opens.
    public static func unavailableHere() -> String? {
        do throws(SystemError) {
            _ = try EchoSocket(family: .ipv4)
            return nil
        } catch {
            return "icmp:// targets need an ICMP socket, and neither a datagram nor a raw one opens "
                + "(\(SystemError("socket", code: error.code).description)): \(EchoSocket.remedies)"
        }
    }

    public static func probe(
        _ job: ProbeJob, on engine: ProbeEngine, completion: @escaping @Sendable (ProbeOutcome) -> Void
    ) -> Bool {
        engine.probe(with: ICMPEchoes.self, completion: completion) { $0.start(job, completion: completion) }
    }
}
