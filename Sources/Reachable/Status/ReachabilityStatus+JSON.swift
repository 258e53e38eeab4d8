import FoundationEssentials

/// The wire form of the status document — its keys and their order, written once: Foundation's
/// encoder on Linux emits keys in hash order, and clients (and people reading `curl` output)
/// deserve the contract's order. Written to a `JSONOutput`: as one line of JSON (`JSONWriter`, as
/// an SSE `data:` field needs), or as the tree `/changes` compares (`jsonValue`).
///
/// The key names are written here (as literals, or `DocumentKey` where others read them too), not
/// read from the types' synthesised `CodingKeys` (private to each type): the round-trip tests (`StatusJSONTests`: every field set, encoded,
/// decoded, compared) fail when a property and its key here differ.
extension ReachabilityStatus {
    /// The document as one line of JSON.
    ///
    /// - Parameter expectedSize: about how large it will be (the last document's size): the
    ///   bytes are reserved at once, with a quarter to spare, so a fleet's document (megabytes)
    ///   is not copied as it grows.
    public func jsonBytes(expectedSize: Int? = nil) -> [UInt8] {
        JSONWriter.bytes(capacity: jsonCapacity(expectedSize: expectedSize)) { write(to: $0) }
    }

    /// The bytes to reserve for the document: the last document's size with a quarter to spare,
    /// or an estimate from its entries. A sixteenth was too little for a link-down: every target
    /// gains a reason and a detail, the document grew past it (docs/scale.md) and was copied into
    /// a buffer twice its size, then back.
    public func jsonCapacity(expectedSize: Int?) -> Int {
        expectedSize.map { $0 + $0 / 4 + 256 } ?? entriesEstimate
    }

    /// About 400 bytes an entry: a target with one family writes about 380.
    private var entriesEstimate: Int { 2048 + 400 * (targets.count + interfaces.count) }

    /// Writes the document where `json` stands (after an SSE frame's head: `EventFrame`).
    public func write(to json: JSONWriter) {
        write(into: json)
    }

    /// The document as a tree, for a diff (`DocumentDiff`).
    public var jsonValue: JSONValue {
        JSONTreeBuilder.tree { write(into: $0) }
    }

    private func write<Output: JSONOutput>(into json: Output) {
        json.object {
            json.field(DocumentKey.state) { json.plain(state.rawValue) }
            json.field(DocumentKey.isReachable) { json.bool(isReachable) }
            json.field(DocumentKey.cause) { json.optional(cause) { Self.cause(json, $0) } }
            json.field("ipv4") { json.bool(ipv4) }
            json.field("ipv6") { json.bool(ipv6) }
            json.field("transport") {
                json.object {
                    for transport in Transport.allCases {
                        json.field(transport.rawValue) { json.bool(self.transport.contains(transport)) }
                    }
                }
            }
            json.field("isDataMetered") { json.bool(isDataMetered) }
            json.field(DocumentKey.interfaces) {
                json.array(interfaces) { interface in
                    json.object {
                        json.field(DocumentKey.name) { json.string(interface.name) }
                        json.field("index") { json.raw(String(interface.index)) }
                        json.field("transport") { json.plain(interface.transport.rawValue) }
                        json.field("kind") { json.optionalString(interface.kind) }
                        json.field("operState") { json.string(interface.operState) }
                        json.field("isDefaultRoute") { json.bool(interface.isDefaultRoute) }
                        json.field("addresses") { json.array(interface.addresses) { json.string($0) } }
                        json.field("connectivity") {
                            json.optional(interface.connectivity) { Self.connectivity(json, $0) }
                        }
                    }
                }
            }
            // A fleet's are most of the document: written in parts by two threads at the same time.
            json.field(DocumentKey.targets) { json.arrayInParts(targets, Self.target) }
            json.field("connectivity") { Self.connectivity(json, connectivity) }
            json.field(DocumentKey.dns) {
                json.object {
                    json.field(DocumentKey.state) { json.plain(dns.state.rawValue) }
                    json.field(DocumentKey.name) { json.optionalString(dns.name) }
                    json.field(DocumentKey.reason) { json.optionalPlain(dns.reason?.rawValue) }
                    json.field(DocumentKey.since) { json.timestamp(dns.since, Self.timestampStyle) }
                    json.field(DocumentKey.servers) {
                        json.array(dns.servers) { server in
                            json.object {
                                json.field(DocumentKey.address) { json.string(server.address) }
                                Self.stateAndReason(json, server.state.rawValue, server.reason?.rawValue)
                                json.field(DocumentKey.since) { json.timestamp(server.since, Self.timestampStyle) }
                            }
                        }
                    }
                }
            }
            json.field("targetsFile") {
                json.optional(targetsFile) { file in
                    json.object {
                        json.field("path") { json.string(file.path) }
                        json.field("appliedAt") { json.timestamp(file.appliedAt, Self.timestampStyle) }
                        json.field("error") { json.optionalString(file.error) }
                    }
                }
            }
            json.field(DocumentKey.sequence) { json.raw(String(sequence)) }
            json.field(DocumentKey.changedAt) { json.timestamp(changedAt, Self.timestampStyle) }
            json.field(DocumentKey.stateSince) { json.timestamp(stateSince, Self.timestampStyle) }
        }
    }

    /// The lowest failing layer, first thing a reader meets.
    private static func cause<Output: JSONOutput>(_ json: Output, _ cause: Cause) {
        json.object {
            json.field("layer") { json.plain(cause.layer.rawValue) }
            json.field("family") { json.optionalPlain(cause.family?.rawValue) }
            json.field("subject") { json.optionalString(cause.subject) }
            json.field(DocumentKey.text) { json.string(cause.text) }
            json.field(DocumentKey.since) { json.timestamp(cause.since, Self.timestampStyle) }
        }
    }

    /// One entry of `targets`.
    private static func target<Output: JSONOutput>(_ json: Output, _ target: TargetStatus) {
        json.object {
            json.field(DocumentKey.name) { json.string(target.name) }
            json.field("url") { json.string(target.url) }
            json.field("via") { json.optionalString(target.via) }
            json.field("proxy") { json.optionalString(target.proxy) }
            Self.stateAndReason(json, target.state.rawValue, target.reason?.rawValue)
            json.field(DocumentKey.detail) { json.optionalString(target.detail) }
            json.field("addresses") { json.array(target.addresses) { json.string($0) } }
            json.field("interface") { json.optionalString(target.interface) }
            json.field(DocumentKey.since) { json.timestamp(target.since, Self.timestampStyle) }
            Self.families(json, { target[$0] }, degraded: target.degraded) { status in
                Self.stateAndReason(json, status.state.rawValue, status.reason?.rawValue)
                json.field(DocumentKey.detail) { json.optionalString(status.detail) }
                json.field(DocumentKey.address) { json.optionalString(status.address) }
                json.field("interface") { json.optionalString(status.interface) }
                json.field("impairments") {
                    json.array(status.impairments) { json.plain($0.rawValue) }
                }
            }
        }
    }

    /// The top-level check and each uplink's are the same object.
    private static func connectivity<Output: JSONOutput>(_ json: Output, _ connectivity: ConnectivityStatus) {
        json.object {
            json.field(DocumentKey.state) { json.plain(connectivity.state.rawValue) }
            json.field("url") { json.optionalString(connectivity.url) }
            json.field("proxy") { json.optionalString(connectivity.proxy) }
            json.field(DocumentKey.reason) { json.optionalPlain(connectivity.reason?.rawValue) }
            json.field(DocumentKey.since) { json.timestamp(connectivity.since, Self.timestampStyle) }
            Self.families(json, { connectivity[$0] }, degraded: connectivity.degraded) { status in
                Self.stateAndReason(json, status.state.rawValue, status.reason?.rawValue)
                json.field(DocumentKey.detail) { json.optionalString(status.detail) }
            }
        }
    }

    /// `"ipv4": {…}, "ipv6": null, "degraded": …`: each family's object, written by `fields`, or
    /// `null` when the family has no addresses; then whether a family is down while the whole is up.
    private static func families<Output: JSONOutput, Family>(
        _ json: Output, _ family: (AddressFamily) -> Family?, degraded: Bool, _ fields: (Family) -> Void
    ) {
        // Spelled out, not `AddressFamily.allCases` (an array made at every call) and their names.
        json.field("ipv4") { json.optional(family(.ipv4)) { status in json.object { fields(status) } } }
        json.field("ipv6") { json.optional(family(.ipv6)) { status in json.object { fields(status) } } }
        json.field("degraded") { json.bool(degraded) }
    }

    /// `"state": …, "reason": …|null`: every verdict in the document reads the same way.
    private static func stateAndReason<Output: JSONOutput>(_ json: Output, _ state: String, _ reason: String?) {
        json.field(DocumentKey.state) { json.plain(state) }
        json.field(DocumentKey.reason) { json.optionalPlain(reason) }
    }
}

/// The keys the rest of reachd reads the document by — the diff's (`DocumentDiff`: what is left
/// out, how entries are named) and the words' (`ChangeText`) — spelled once, here, and written
/// by the encoder above through these names.
public enum DocumentKey {
    public static var sequence: String { "sequence" }
    public static var changedAt: String { "changedAt" }
    public static var stateSince: String { "stateSince" }
    public static var since: String { "since" }
    public static var name: String { "name" }
    public static var address: String { "address" }
    public static var cause: String { "cause" }
    public static var text: String { "text" }
    public static var state: String { "state" }
    public static var reason: String { "reason" }
    public static var detail: String { "detail" }
    public static var isReachable: String { "isReachable" }
    public static var targets: String { "targets" }
    public static var interfaces: String { "interfaces" }
    public static var dns: String { "dns" }
    public static var servers: String { "servers" }
}
