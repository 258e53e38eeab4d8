import Foundation
import Reachable
import Testing

/// The status document's wire form: the contract of `/status` and of every `/events` frame.
@Suite struct StatusJSONTests {
    /// 2026-11-21T22:00:00.250Z: a quarter second is exact in binary, so no rounding question.
    private static let changedAt = Date(timeIntervalSince1970: 1_795_298_400.25)

    private static func example(name: String = "eth0", kind: String? = "veth") -> ReachabilityStatus {
        ReachabilityStatus(
            path: NetworkPath(
                state: .reachable, ipv4: true, ipv6: false, transport: TransportSet(ethernet: true),
                isDataMetered: false,
                interfaces: [
                    InterfaceStatus(
                        name: name, index: 2, transport: .ethernet, kind: kind, operState: "up", isDefaultRoute: true,
                        addresses: ["198.18.0.2/24", "fe80::1/64"]
                    )
                ]
            ),
            sequence: 7, changedAt: changedAt
        )
    }

    private static func text(_ status: ReachabilityStatus) -> String {
        String(decoding: status.jsonBytes(), as: UTF8.self)
    }

    @Test func matchesTheContractExampleByteForByte() {
        let expected =
            #"{"state":"reachable","isReachable":true,"cause":null,"ipv4":true,"ipv6":false,"#
            + #""transport":{"wifi":false,"cellular":false,"ethernet":true,"other":false},"isDataMetered":false,"#
            + #""interfaces":[{"name":"eth0","index":2,"transport":"ethernet","kind":"veth","operState":"up","#
            + #""isDefaultRoute":true,"addresses":["198.18.0.2/24","fe80::1/64"],"connectivity":null}],"targets":[],"#
            + #""connectivity":{"state":"disabled","url":null,"proxy":null,"reason":null,"since":"2026-11-21T22:00:00.250Z","#
            + #""ipv4":null,"ipv6":null,"degraded":false},"#
            + #""dns":{"state":"disabled","name":null,"reason":null,"since":"2026-11-21T22:00:00.250Z","servers":[]},"#
            + #""targetsFile":null,"sequence":7,"changedAt":"2026-11-21T22:00:00.250Z","stateSince":"2026-11-21T22:00:00.250Z"}"#
        #expect(Self.text(Self.example()) == expected)
    }

    @Test func targetsAndConnectivityRoundTripWithEveryStateAndReason() throws {
        let since = Self.changedAt
        var status = Self.example()
        status.targets =
            TargetStatus.State.allCases.map {
                TargetStatus(name: "t-\($0.rawValue)", url: "tcp://db.test:5432", state: $0, since: since)
            }
            + [TargetStatus(name: "pinned", url: "tcp://db.test:5432", via: "wan1", since: since)]
            + [
                TargetStatus(
                    name: "proxied", url: "https://api.test/", proxy: "http://[2001:db8::3]:3128", since: since)
            ]
            + ProbeFailureReason.allCases.map {
                TargetStatus(
                    name: "r-\($0.rawValue)", url: "https://[2001:db8::1]/x?q=\"", state: .unreachable, reason: $0,
                    addresses: ["198.18.1.10", "2001:db8::1"], interface: "eth0", since: since)
            }
        for state in ConnectivityStatus.State.allCases {
            status.connectivity = ConnectivityStatus(
                state: state, url: state == .disabled ? nil : "http://check.test/generate_204",
                proxy: state == .disabled ? nil : "http://198.18.0.1:3128", reason: state == .limited ? .proxy : nil,
                since: since)
            let decoded = try ReachabilityStatus(jsonBytes: status.jsonBytes())
            #expect(decoded == status)
        }
        let text = Self.text(status)
        #expect(text.contains(#""reason":"no-route""#))
        #expect(
            text.contains(#"{"name":"pinned","url":"tcp://db.test:5432","via":"wan1","proxy":null,"state":"unknown","#))
        #expect(
            text.contains(
                #"{"name":"proxied","url":"https://api.test/","via":null,"proxy":"http://[2001:db8::3]:3128","#))
        #expect(text.contains(#""url":"http://check.test/generate_204","proxy":"http://198.18.0.1:3128","#))
        #expect(text.contains(#""reason":"proxy""#))
        #expect(text.contains(#""reason":"http-status""#))
        #expect(
            text.contains(
                #"{"name":"t-unknown","url":"tcp://db.test:5432","via":null,"proxy":null,"state":"unknown","#
                    + #""reason":null,"#))
        #expect(
            text.contains(
                #""addresses":[],"interface":null,"since":"2026-11-21T22:00:00.250Z","ipv4":null,"ipv6":null,"#
                    + #""degraded":false}"#))
    }

    @Test func familiesAndDNSRoundTripWithEveryStateAndReason() throws {
        let since = Self.changedAt
        var status = Self.example()
        status.targets = [
            TargetStatus(
                name: "db", url: "tcp://db.test:5432", state: .reachable, addresses: ["198.18.1.10", "2001:db8::1"],
                interface: "eth0", since: since,
                ipv4: TargetFamilyStatus(state: .reachable, address: "198.18.1.10", interface: "eth0"),
                ipv6: TargetFamilyStatus(
                    state: .unreachable, reason: .timeout, detail: "no connection within the timeout",
                    address: "2001:db8::1", interface: "eth0"),
                degraded: true)
        ]
        status.connectivity = ConnectivityStatus(
            state: .full, url: "http://check.test/", since: since, ipv4: ConnectivityFamilyStatus(state: .full),
            ipv6: ConnectivityFamilyStatus(state: .limited, reason: .tls, detail: "certificate has expired"),
            degraded: true)
        status.dns = DNSStatus(
            state: .degraded, name: "kubernetes.default.svc.cluster.local.", since: since,
            servers: NameserverStatus.State.allCases.map {
                NameserverStatus(address: "10.96.0.10", state: $0, since: since)
            }
                + DNSFailureReason.allCases.map {
                    NameserverStatus(address: "10.96.0.11", state: .failing, reason: $0, since: since)
                })
        status.targetsFile = TargetsFileStatus(
            path: "/etc/reachd/targets", appliedAt: since, error: #"line 3: invalid target "oops""#)
        let decoded = try ReachabilityStatus(jsonBytes: status.jsonBytes())
        #expect(decoded == status)
        let text = Self.text(status)
        #expect(
            text.contains(
                #""ipv6":{"state":"unreachable","reason":"timeout","detail":"no connection within the timeout","#
                    + #""address":"2001:db8::1","interface":"eth0","impairments":[]},"degraded":true}"#))
        #expect(
            text.contains(
                #""ipv6":{"state":"limited","reason":"tls","detail":"certificate has expired"},"degraded":true}"#))
        #expect(
            text.contains(
                #""targetsFile":{"path":"/etc/reachd/targets","appliedAt":"2026-11-21T22:00:00.250Z","#
                    + #""error":"line 3: invalid target \"oops\""},"sequence":7"#))
        #expect(text.contains(#""reason":"no-servers""#))
        #expect(text.contains(#""dns":{"state":"degraded","name":"kubernetes.default.svc.cluster.local.","#))
    }

    /// `/changes` compares the tree the encoder builds (`jsonValue`), `/status` serves its text:
    /// the two are one shape, whatever the document holds.
    @Test func theTreeIsTheTextParsed() throws {
        var status = Self.example()
        status.cause = Cause(
            layer: .link, family: .ipv6, subject: "eth0", text: "eth0 is \u{1b} down", since: Self.changedAt)
        status.targets = (0..<3).map { index in
            TargetStatus(
                name: "t\(index)", url: "tcp://db.test:5432", state: .unreachable, reason: .timeout,
                detail: "\"quoted\"",
                addresses: ["198.18.1.10", "2001:db8::1"], since: Self.changedAt,
                ipv4: TargetFamilyStatus(state: .reachable, address: "198.18.1.10", interface: "eth0"), degraded: true)
        }
        status.dns = DNSStatus(
            state: .degraded, name: "k.test.", since: Self.changedAt,
            servers: [NameserverStatus(address: "10.96.0.11", state: .failing, reason: .timeout, since: Self.changedAt)]
        )
        status.targetsFile = TargetsFileStatus(path: "/etc/reachd/targets", appliedAt: Self.changedAt, error: nil)
        #expect(status.jsonValue == (try JSONValue(parsing: status.jsonBytes())))
        #expect(Self.example().jsonValue == (try JSONValue(parsing: Self.example().jsonBytes())))
    }

    @Test func isOneLine() {
        let bytes = Self.example(name: "line\nbreak\r").jsonBytes()
        #expect(!bytes.contains(UInt8(ascii: "\n")))
        #expect(!bytes.contains(UInt8(ascii: "\r")))
    }

    @Test func fieldsAppearInTheContractsOrder() throws {
        let text = Self.text(Self.example())
        let topLevel = [
            "state", "isReachable", "cause", "ipv4", "ipv6", "transport", "isDataMetered", "interfaces", "targets",
            "connectivity", "dns", "targetsFile", "sequence", "changedAt", "stateSince",
        ]
        let interface = [
            "name", "index", "transport", "kind", "operState", "isDefaultRoute", "addresses", "connectivity",
        ]
        // Each key after the one before it (an interface has a `connectivity` of its own).
        var from = text.startIndex
        for key in topLevel {
            from = try #require(text.range(of: "\"\(key)\":", range: from..<text.endIndex)?.upperBound, "\(key)")
        }
        let start = try #require(text.range(of: "\"interfaces\":[")?.upperBound)
        let inner = String(text[start...])
        let innerPositions = try interface.map { try #require(inner.range(of: "\"\($0)\":")?.lowerBound) }
        #expect(innerPositions == innerPositions.sorted())
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(Set(object.keys) == Set(topLevel), "no field more or less")
    }

    /// One of a fleet's targets: every third unreachable, some with a name to escape, a few times.
    private static func fleetTarget(_ index: Int) -> TargetStatus {
        let address = "198.19.\(index / 250).\(index % 250)"
        let name = index % 97 == 0 ? "quote\"\(index)" : "t\(index)"
        let down = index % 3 == 0
        return TargetStatus(
            name: name, url: "http://\(address)/", state: down ? .unreachable : .reachable,
            reason: down ? .noRoute : nil, addresses: [address],
            since: changedAt.addingTimeInterval(Double(index % 5)))
    }

    /// A fleet's targets are written in parts by two threads at the same time (`LargeDocuments.runInParts`): byte for byte
    /// what each entry written on its own gives, joined in order — with the room reserved for it,
    /// and with too little (every piece then grows its own buffer).
    @Test(arguments: [nil, 100]) func aFleetsTargetsWrittenInPartsAreEachEntryInOrder(expectedSize: Int?) throws {
        var status = Self.example()
        status.targets = (0..<(2 * LargeDocuments.worthSharing + 1)).map(Self.fleetTarget)
        func targetsText(_ status: ReachabilityStatus) -> Substring {
            let text = Self.text(status)
            let start = text.range(of: #""targets":["#)!.upperBound
            let end = text.range(of: #"],"connectivity":{"#)!.lowerBound
            return text[start..<end]
        }
        let pieces = status.targets.map { target in
            var alone = status
            alone.targets = [target]
            return String(targetsText(alone))
        }
        let whole = String(decoding: status.jsonBytes(expectedSize: expectedSize), as: UTF8.self)
        var empty = status
        empty.targets = []
        let expected = Self.text(empty).replacingOccurrences(
            of: #""targets":[]"#, with: #""targets":["# + pieces.joined(separator: ",") + "]")
        #expect(whole == expected)
        #expect(try ReachabilityStatus(jsonBytes: Array(whole.utf8)) == status)
    }

    @Test func roundTripsThroughJSONDecoder() throws {
        let status = Self.example()
        let decoded = try ReachabilityStatus(jsonBytes: status.jsonBytes())
        #expect(decoded == status)
    }

    /// The decoder is the compiler's: every field the document has is required (the choice is
    /// written on `ReachabilityStatus(jsonBytes:)`), and times are read in the document's style only.
    @Test func aDocumentWithoutAFieldOrWithAnotherTimeIsRefused() throws {
        let text = Self.text(Self.example())
        #expect(throws: DecodingError.self, "a field with an initial value is required too") {
            try ReachabilityStatus(jsonBytes: text.replacing(#""isDataMetered":false,"#, with: "").utf8)
        }
        #expect(throws: DecodingError.self) {
            try ReachabilityStatus(
                jsonBytes: text.replacing(#","stateSince":"2026-11-21T22:00:00.250Z""#, with: "").utf8)
        }
        #expect(throws: DecodingError.self) {
            try ReachabilityStatus(
                jsonBytes: text.replacing(#""2026-11-21T22:00:00.250Z"}"#, with: "1795298400.25}").utf8)
        }
        #expect(throws: DecodingError.self) {
            try ReachabilityStatus(
                jsonBytes: text.replacing(#""2026-11-21T22:00:00.250Z"}"#, with: #""0000-01-01T00:00:00.000+01:00"}"#)
                    .utf8)
        }
    }

    /// `path` is the route-based fields, read and written as one.
    @Test func pathReadsAndWritesTheRouteBasedFields() {
        var status = Self.example()
        let path = status.path
        #expect(path.state == status.state && path.interfaces == status.interfaces && path.ipv4 == status.ipv4)
        status.path = .unknown
        #expect(status.state == .unknown && status.interfaces.isEmpty && !status.ipv4)
        #expect(status.path == .unknown)
        status.path = path
        #expect(status == Self.example())
    }

    /// An uplink's own check (`--per-uplink`) is the top-level check's object, beside its
    /// interface; the kernel's path leaves it where it is.
    @Test func anInterfacesConnectivityRoundTripsAndSurvivesANewPath() throws {
        var status = Self.example()
        let uplink = ConnectivityStatus(
            state: .limited, url: "http://check.test/generate_204", reason: .timeout, since: Self.changedAt,
            ipv4: ConnectivityFamilyStatus(state: .limited, reason: .timeout, detail: "no answer"), ipv6: nil)
        status.interfaces[0].connectivity = uplink
        let text = Self.text(status)
        #expect(
            text.contains(
                #""connectivity":{"state":"limited","url":"http://check.test/generate_204","proxy":null,"reason":"timeout","#
                    + #""since":"2026-11-21T22:00:00.250Z","ipv4":{"state":"limited","reason":"timeout","#
                    + #""detail":"no answer"},"ipv6":null,"degraded":false}}],"targets""#), "\(text)")
        #expect(try ReachabilityStatus(jsonBytes: text.utf8) == status)
        // A new reading of the kernel (which knows nothing of the check) keeps it by name.
        status.path = Self.example().path
        #expect(status.interfaces[0].connectivity == uplink)
        status.path = Self.example(name: "eth1").path
        #expect(status.interfaces[0].connectivity == nil, "another interface: not its check")
    }

    @Test func aCauseRoundTrips() throws {
        var status = Self.example()
        status.cause = Cause(
            layer: .link, family: .ipv6, subject: "eth0", text: "eth0 is down (no carrier)", since: Self.changedAt)
        let text = Self.text(status)
        #expect(
            text.contains(
                #""isReachable":true,"cause":{"layer":"link","family":"ipv6","subject":"eth0","#
                    + #""text":"eth0 is down (no carrier)","since":"2026-11-21T22:00:00.250Z"},"ipv4""#))
        #expect(try ReachabilityStatus(jsonBytes: text.utf8) == status)
    }

    @Test func unknownStatusRoundTrips() throws {
        let status = ReachabilityStatus(path: .unknown, sequence: 0, changedAt: Self.changedAt)
        let text = Self.text(status)
        #expect(text.hasPrefix(#"{"state":"unknown","isReachable":false,"cause":null,"ipv4":false,"ipv6":false,"#))
        #expect(text.contains(#""interfaces":[]"#))
        #expect(try ReachabilityStatus(jsonBytes: text.utf8) == status)
    }

    @Test func isReachableMirrorsState() throws {
        for state in [NetworkPath.State.unknown, .reachable, .unreachable] {
            let status = ReachabilityStatus(path: NetworkPath(state: state), sequence: 1, changedAt: Self.changedAt)
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(status.jsonBytes())) as? [String: Any])
            #expect(object["state"] as? String == state.rawValue)
            #expect(object["isReachable"] as? Bool == (state == .reachable))
        }
    }

    @Test(arguments: [
        "quote\"d", "back\\slash", "new\nline", "tab\tand\r", "bell\u{07}nul\u{00}esc\u{1B}", "del\u{7F}",
        "unicodé-🚀", "</script>", "\u{2028}sep",
    ])
    func escapesOddInterfaceNames(name: String) throws {
        let status = Self.example(name: name)
        let bytes = status.jsonBytes()
        #expect(!bytes.contains { $0 < 0x20 }, "no raw control characters")
        let decoded = try ReachabilityStatus(jsonBytes: bytes)
        #expect(decoded.path.interfaces.first?.name == name)
        #expect(decoded == status)
    }

    @Test func escapesUseTheShortFormsAndUnicodeEscapes() {
        let text = Self.text(Self.example(name: "a\"b\\c\nd\u{01}"))
        #expect(text.contains(#""name":"a\"b\\c\nd\u0001""#))
    }

    @Test func kindIsNullWhenAbsent() throws {
        let status = Self.example(kind: nil)
        let text = Self.text(status)
        #expect(text.contains(#""kind":null,"operState""#))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let interface = try #require((object["interfaces"] as? [[String: Any]])?.first)
        #expect(interface.keys.contains("kind"), "present, not omitted")
        #expect(interface["kind"] is NSNull)
        #expect(try ReachabilityStatus(jsonBytes: text.utf8) == status)
    }

    @Test(arguments: [0.0, 0.001, 0.25, 0.999, 0.5])
    func changedAtHasMillisecondsAndZ(fraction: Double) throws {
        let date = Date(timeIntervalSince1970: 1_795_298_400 + fraction)
        let status = ReachabilityStatus(path: .unknown, sequence: 1, changedAt: date)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.jsonBytes())) as? [String: Any])
        let stamp = try #require(object["changedAt"] as? String)
        #expect(stamp.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/) != nil, "\(stamp)")
        #expect(stamp.hasPrefix("2026-11-21T22:00:00."))
        if (fraction * 4).rounded() == fraction * 4 {  // exact in binary: the digits are certain
            #expect(stamp == "2026-11-21T22:00:00.\(String(format: "%03d", Int(fraction * 1000)))Z")
        }
    }

    @Test func changedAtOfNowHasMillisecondsAndZ() throws {
        let status = ReachabilityStatus(path: .unknown, sequence: 1, changedAt: Date())
        let text = Self.text(status)
        let match = try #require(text.firstMatch(of: /"changedAt":"([^"]+)"/))
        #expect(String(match.1).wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/) != nil)
    }

    @Test func largeSequenceAndIndexAreWrittenAsIntegers() throws {
        var status = Self.example()
        status.sequence = UInt64.max
        status.path.interfaces[0].index = Int32.max
        let text = Self.text(status)
        #expect(text.contains(#""sequence":18446744073709551615,"#))
        #expect(text.contains(#""index":2147483647,"#))
        #expect(try ReachabilityStatus(jsonBytes: text.utf8) == status)
    }
}
