/// What one probe of one family measured of the path's quality, for the target's window
/// (`QualityWindow`) and `/metrics`; never the document itself (it changes on every probe).
public struct ProbeQuality: Sendable, Equatable {
    /// What the full-size echo of an `icmp://` probe found.
    public enum PathMTU: Sendable, Equatable {
        /// Answered: the path carries the interface's MTU (the echo's IP packet size).
        case carried(bytes: Int)
        /// An ICMP "fragmentation needed" / "packet too big" named a smaller MTU: discovery works.
        case discovered(bytes: Int)
        /// Neither, while small echoes were answered: full-size packets vanish.
        case blackhole

        /// The path MTU in bytes; `nil` for a blackhole.
        public var bytes: Int? {
            switch self {
            case .carried(let bytes), .discovered(let bytes): bytes
            case .blackhole: nil
            }
        }
    }

    /// Round trips: each answered small echo's (icmp), or the TCP handshake (tcp, http: libcurl's
    /// connect time, not TLS).
    public var roundTrips: [Duration]
    /// Small echoes sent and answered (icmp only).
    public var echoesSent: Int
    public var echoesAnswered: Int
    /// `nil` for the kinds that measure none, or when no small echo was answered.
    public var pathMTU: PathMTU?

    public init(roundTrips: [Duration] = [], echoesSent: Int = 0, echoesAnswered: Int = 0, pathMTU: PathMTU? = nil) {
        self.roundTrips = roundTrips
        self.echoesSent = echoesSent
        self.echoesAnswered = echoesAnswered
        self.pathMTU = pathMTU
    }
}
