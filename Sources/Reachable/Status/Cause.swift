public import FoundationEssentials

/// The one line a person on call reads: the lowest layer that fails, which explains the failures
/// above it (`eth0 is down (no carrier)` rather than every target, DNS and connectivity that
/// failed with it). `null` in the document exactly when nothing is known to be wrong. The rules
/// that choose it are `CauseRules`; the monitor sets it on every document it publishes.
public struct Cause: Sendable, Equatable, Decodable {
    /// The layers, lowest first: a lower one explains the ones after it.
    public enum Layer: String, Sendable, Hashable, CaseIterable, Decodable {
        case link
        case address
        case route
        case dns
        case path
        case portal
        case check
        case target
        case uplink
        case quality
        case config
    }

    public var layer: Layer
    /// The family it concerns; `nil` when it concerns both, or every family there is.
    public var family: AddressFamily?
    /// An interface, a nameserver or a target, by name; `nil` when the layer has none.
    public var subject: String?
    /// The cause in words, for people (the words may change while the cause stays).
    public var text: String
    /// When this layer, family and subject became the cause.
    public var since: Date

    public init(layer: Layer, family: AddressFamily? = nil, subject: String? = nil, text: String, since: Date) {
        self.layer = layer
        self.family = family
        self.subject = subject
        self.text = text
        self.since = since
    }

    /// The same cause, whatever its words: it keeps its `since`.
    public func isSameCause(as other: Cause) -> Bool {
        layer == other.layer && family == other.family && subject == other.subject
    }
}

extension AddressFamily: Decodable {}
