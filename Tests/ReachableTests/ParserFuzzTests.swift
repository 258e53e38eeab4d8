import CMnl
import Foundation
import Glibc
import Reachable
import Testing

/// Thousands of random and mutated datagrams through the parser, the table, `derive` and the
/// JSON writer: nothing may crash, and what comes out must still make sense.
@Suite struct ParserFuzzTests {
    /// Valid, kernel-shaped messages to mutate.
    private static let corpus: [[UInt8]] = [
        Messages.loopback(),
        Messages.veth(index: 2, name: "eth0"),
        MessageBuilder.link(index: 3, name: "wlan0", flags: LinkFlags.running),
        MessageBuilder.link(
            index: 4, name: "wg0", flags: LinkFlags.tunnel, hardwareType: ARPHRD_NONE,
            operState: UInt8(IF_OPER_UNKNOWN), kind: "wireguard"),
        MessageBuilder.link(index: 5, name: "rmnet0", flags: LinkFlags.running, hardwareType: ARPHRD_RAWIP),
        MessageBuilder.link(removed: true, index: 3, name: "wlan0", flags: 0),
        MessageBuilder.address(index: 2, "198.18.0.2", prefix: 24),
        MessageBuilder.address(index: 2, "2001:db8::2", prefix: 64),
        MessageBuilder.address(index: 3, "fe80::3", prefix: 64, scope: UInt8(RT_SCOPE_LINK.rawValue)),
        MessageBuilder.address(index: 4, "198.19.4.4", prefix: 32, flags: UInt32(IFA_F_TENTATIVE)),
        MessageBuilder.address(removed: true, index: 2, "198.18.0.2", prefix: 24),
        MessageBuilder.route(priority: 100, outputInterface: 2, gateway: "198.18.0.1", preferredSource: "198.18.0.2"),
        MessageBuilder.route(family: AF_INET6, priority: 1024, outputInterface: 2, gateway: "fe80::1"),
        MessageBuilder.route(table: 1000, outputInterface: 4),
        MessageBuilder.route(multipath: [(2, "198.18.0.1"), (3, "198.18.1.1")]),
        MessageBuilder.route(type: UInt8(RTN_UNREACHABLE), priority: 5),
        MessageBuilder.route(removed: true, priority: 100, outputInterface: 2),
        MessageBuilder.lookupAnswer(destination: "8.8.8.8", outputInterface: 2, preferredSource: "198.18.0.2"),
        MessageBuilder.rule(),
        MessageBuilder.done(),
        MessageBuilder.error(-ENOBUFS),
    ]

    private enum Mutation: CaseIterable {
        case randomBytes, flipBytes, truncate, corruptLength, shortenMessage, corruptAttributeLength, changeType
        case concatenate, garbageTail
    }

    /// Runs in a child process (an exit test): a crash is then a failure of this test with
    /// its signal, not the end of the whole test run. Each datagram ends at an unreadable page,
    /// so an over-read of even one byte is a crash too.
    ///
    /// Violations come back as issues (Swift Testing forwards a child's issues to this process),
    /// not on the child's standard output: observing that output makes Swift Testing block a
    /// second thread of the cooperative pool in a read for as long as the child runs, and with
    /// one thread per core that stopped every other test of the run on a two-core machine
    /// (seconds under the sanitizers, long enough to fail tests with time bounds).
    @Test func twentyThousandRandomAndMutatedDatagramsNeverCrash() async {
        await #expect(processExitsWith: .success) {
            let report = ParserFuzzTests.fuzz(seed: 0x5EED_2026_1121, iterations: 20_000)
            for violation in report.violations.prefix(20) { Issue.record("\(report.summary): \(violation)") }
            exit(report.violations.isEmpty ? 0 : 1)
        }
    }

    struct Report {
        var summary = ""
        var violations: [String] = []
    }

    /// Parses, applies and derives; checks invariants without `#expect` (it runs in a child).
    static func fuzz(seed: UInt64, iterations: Int) -> Report {
        var random = SeededGenerator(seed: seed)
        let memory = GuardedBuffer()
        var parser = NetlinkParser()
        var table = NetworkTable()
        var report = Report()
        var parsed = 0
        var derived = 0
        func check(_ condition: Bool, _ message: @autoclosure () -> String) {
            if !condition { report.violations.append(message()) }
        }

        for iteration in 0..<iterations {
            let datagram = datagram(&random)
            // Ends at an unreadable page: reading even one byte past the datagram crashes.
            let envelopes = memory.withDatagram(datagram) { parser.parse($0) }
            check(envelopes.count <= datagram.count / 16, "\(iteration): more messages than headers")
            parsed += envelopes.count
            for envelope in envelopes {
                if case .address(let address) = envelope.message {
                    check(
                        address.address.bytes.count == (Int32(address.family) == AF_INET ? 4 : 16),
                        "\(iteration): address size"
                    )
                }
                table.apply(envelope.message)
            }
            if iteration % 25 == 0 {
                for problem in deriveAndCheck(table, &random) { check(false, "\(iteration): \(problem)") }
                derived += 1
            }
            if iteration % 2_000 == 1_999 { table = NetworkTable() }  // keep derive's input small
        }
        report.summary =
            "fuzz: \(iterations) datagrams, \(parsed) messages parsed, \(parser.malformedCount) malformed, "
            + "\(parser.unknownCount) unknown, \(derived) derivations"
        check(parsed > iterations / 4, "mutations should keep many messages valid: \(parsed)")
        check(parser.malformedCount > iterations / 4, "mutations should make many malformed: \(parser.malformedCount)")
        check(parser.unknownCount > 0, "some types should be unknown")
        return report
    }

    /// Derives with lookups aimed at what the table holds, then checks the path's invariants and
    /// that its JSON is one valid line that decodes.
    private static func deriveAndCheck(_ table: NetworkTable, _ random: inout SeededGenerator) -> [String] {
        func randomLookup() -> RouteLookup {
            switch Int.random(in: 0..<4, using: &random) {
            case 0: return .failed(errno: ENETUNREACH)
            case 1: return .notAsked
            default:
                let link = table.links.keys.randomElement(using: &random) ?? Int32.random(in: 0...8, using: &random)
                let source = table.addresses.randomElement(using: &random)?.address
                return .route(
                    type: UInt8.random(in: 0...3, using: &random), outputInterface: link, preferredSource: source)
            }
        }
        let path = derive(
            table: table, lookups: RouteLookups(ipv4: randomLookup(), ipv6: randomLookup()),
            classifier: TransportClassifier(facts: FakeInterfaceFacts()), meteredPatterns: ["wwan*", "[", "*"]
        )
        var problems: [String] = []
        if path.state == .unknown { problems.append("derive returned unknown") }
        if path.isReachable != (path.ipv4 || path.ipv6) { problems.append("state disagrees with families") }
        if path.interfaces.map(\.index) != path.interfaces.map(\.index).sorted() { problems.append("unsorted") }
        if path.transport != TransportSet() && !path.isReachable { problems.append("transport while unreachable") }
        let bytes = ReachabilityStatus(path: path, sequence: 1, changedAt: Date()).jsonBytes()
        if bytes.contains(UInt8(ascii: "\n")) { problems.append("JSON spans lines") }
        do {
            let decoded = try ReachabilityStatus(jsonBytes: bytes)
            if decoded.path.interfaces.map(\.name) != path.interfaces.map(\.name) { problems.append("names changed") }
        } catch {
            problems.append("JSON does not decode: \(error)")
        }
        return problems
    }

    private static func datagram(_ random: inout SeededGenerator) -> [UInt8] {
        func valid() -> [UInt8] { corpus.randomElement(using: &random)! }
        func someValid() -> [UInt8] { (0..<Int.random(in: 1...4, using: &random)).flatMap { _ in valid() } }
        func randomBytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) } }

        switch Mutation.allCases.randomElement(using: &random)! {
        case .randomBytes:
            var bytes = randomBytes(Int.random(in: 0...300, using: &random))
            if bytes.count >= 16, Bool.random(using: &random) {
                bytes.setMessageLength(UInt32(Int.random(in: 0...bytes.count, using: &random)))  // plausible framing
            }
            return bytes
        case .flipBytes:
            var bytes = someValid()
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            return bytes
        case .truncate:
            let bytes = someValid()
            return Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &random)))
        case .corruptLength:
            var bytes = valid()
            bytes.setMessageLength(UInt32(Int.random(in: 0...(bytes.count + 64), using: &random)))
            return bytes + (Bool.random(using: &random) ? valid() : [])
        case .shortenMessage:
            // A datagram that ends where its (now unaligned) last message says it ends.
            var bytes = valid()
            let length = Int.random(in: 16...bytes.count, using: &random)
            bytes.setMessageLength(UInt32(length))
            return Array(bytes.prefix(length))
        case .corruptAttributeLength:
            var bytes = valid()
            let attributes = bytes.attributeOffsets(fixedHeader: 16).filter { $0 + 2 <= bytes.count }
            if let offset = attributes.randomElement(using: &random) {
                bytes.patch(UInt16(Int.random(in: 0...(bytes.count + 8), using: &random)), at: offset)
            } else if bytes.count > 20 {
                bytes.patch(UInt16.random(in: 0...UInt16.max, using: &random), at: 20)
            }
            return bytes
        case .changeType:
            var bytes = valid()
            bytes.patch(UInt16.random(in: 0...110, using: &random), at: 4)
            return bytes
        case .concatenate:
            return someValid()
        case .garbageTail:
            return someValid() + randomBytes(Int.random(in: 1...40, using: &random))
        }
    }
}
