import CMnl
import FoundationEssentials
import FuzzSupport
import Glibc

@testable import Reachable

/// The netlink path of the monitor, fed from the fuzzer instead of the kernel: datagrams parsed
/// and applied as `NetlinkSource` and `NetlinkRequester` do, then the batch's silent flushes,
/// `derive`, the routing snapshot, the route verdicts and the JSON of the resulting document.
///
/// The input is what the kernel would deliver, one record after another:
///
///     tag (1 byte), then for tags 0–3: length (2 bytes, little-endian) and that many bytes
///
/// tag % 5 — 0: a datagram on the event socket (a batch of notifications); 1: a datagram of a
/// dump answer on the request socket; 2, 3: the kernel's answer to the IPv4 or IPv6 route
/// lookup; 4: the end of a batch (the source drains, re-reads and derives). The input's end
/// ends the last batch. Real recorded messages are the seed corpus (`Fuzz/record-netlink.py`).
enum NetlinkStream {
    /// Every datagram ends at an unreadable page: reading one byte past it crashes.
    private static let memory = GuardedBuffer(usableBytes: 64 * 1024)
    private static let classifier = TransportClassifier(facts: SysfsInterfaceFacts(root: fixtures + "/sysfs"))
    private static let changedAt = Date(timeIntervalSince1970: 1_795_000_000.125)

    /// `Fuzz/Fixtures`: a small sysfs tree (a Wi-Fi and a modem device), read by the real
    /// `SysfsInterfaceFacts` for links without a kind.
    private static var fixtures: String {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)  // Sources/FuzzNetlink/NetlinkStream.swift
        return parts.joined(separator: "/") + "/Fixtures"
    }

    static func run(_ input: inout FuzzInput) {
        var state = State()
        while !input.isEmpty {
            let tag = input.byte() % 5
            if tag == 4 {
                state.endBatch(checkingJSON: false)
                continue
            }
            let datagram = input.take(Int(input.uint16()))
            memory.withBytes(datagram) { bytes in
                switch tag {
                case 0: state.receiveEvents(bytes)
                case 1: state.receiveDump(bytes)
                default: state.receiveLookupAnswer(bytes, ipv6: tag == 3)
                }
            }
        }
        state.endBatch(checkingJSON: true)
    }

    /// What one `NetlinkSource` holds: the table, its parsers, the lookups' last answers and
    /// the silent flushes noted in the batch so far.
    private struct State {
        var table = NetworkTable()
        var eventParser = NetlinkParser(keepsSpecificRoutes: false)
        var dumpParser = NetlinkParser(keepsSpecificRoutes: false)
        var lookupParser = NetlinkParser()
        var flushed = SilentFlushes()
        var lookups = RouteLookups(ipv4: .notAsked, ipv6: .notAsked)

        mutating func receiveEvents(_ bytes: UnsafeRawBufferPointer) {
            for envelope in parse(bytes, with: &eventParser) {
                flushed.note(envelope.message, before: table)
                table.apply(envelope.message)
            }
        }

        /// As `NetlinkRequester.dumpOnce`: applied until the end of the dump or an error.
        mutating func receiveDump(_ bytes: UnsafeRawBufferPointer) {
            for envelope in parse(bytes, with: &dumpParser) {
                switch envelope.message {
                case .done: return
                case .error(let code) where code != 0: return
                default: table.apply(envelope.message)
                }
            }
        }

        /// As `NetlinkRequester.lookup`: the first route or error of the answer decides.
        mutating func receiveLookupAnswer(_ bytes: UnsafeRawBufferPointer, ipv6: Bool) {
            for envelope in parse(bytes, with: &lookupParser) {
                let answer: RouteLookup
                switch envelope.message {
                case .route(let route):
                    answer = .route(
                        type: route.type, outputInterface: route.outputInterfaces.first,
                        preferredSource: route.preferredSource)
                case .error(let code) where code != 0:
                    answer = .failed(errno: 0 &- code)  // wrapping: a garbled Int32.min must not trap
                default:
                    continue
                }
                if ipv6 { lookups.ipv6 = answer } else { lookups.ipv4 = answer }
                return
            }
        }

        /// As `NetlinkSource.drain` after the last datagram, then `derivePath`. The JSON is read
        /// back only for the last batch of an input: decoding is most of a run's time.
        mutating func endBatch(checkingJSON: Bool) {
            table.removeRoutes(preferredSources: flushed.sources)
            for index in flushed.interfacesToReread(after: table) {
                // The source dumps the routes of a link that still exists (dump records follow
                // in the input); those of a removed one are forgotten.
                table.removeRoutes(through: index)
            }
            flushed = SilentFlushes()
            checkDerivation(checkingJSON: checkingJSON)
        }

        private func parse(_ bytes: UnsafeRawBufferPointer, with parser: inout NetlinkParser) -> [NetlinkEnvelope] {
            let malformedBefore = parser.malformedCount
            let envelopes = parser.parse(bytes)
            require(envelopes.count <= bytes.count / 16, "\(envelopes.count) messages from \(bytes.count) bytes")
            // The same bytes as a grouping dump would read them (`RoutePrefixes.note`): never a
            // crash, whatever the kernel (or the fuzzer) sends.
            var prefixes = RoutePrefixes()
            _ = NetlinkParser.forEachMessage(in: bytes) { prefixes.note($0) }
            for probe in [IPAddress("198.18.0.1")!, IPAddress("2001:db8::1")!] {
                _ = prefixes.group(of: probe)
            }
            require(parser.malformedCount >= malformedBefore, "the malformed count went down")
            for envelope in envelopes {
                switch envelope.message {
                case .address(let address), .addressRemoved(let address):
                    let size = Int32(address.family) == AF_INET ? 4 : 16
                    require(
                        address.address.bytes.count == size,
                        "an address of family \(address.family) has \(address.address.bytes.count) bytes")
                case .route(let route), .routeRemoved(let route):
                    if let source = route.preferredSource {
                        let size = Int32(route.family) == AF_INET6 ? 16 : 4
                        require(source.bytes.count == size, "a preferred source of \(source.bytes.count) bytes")
                    }
                default:
                    break
                }
            }
            return envelopes
        }

        private func checkDerivation(checkingJSON: Bool) {
            let patterns = ["wwan*", "usb[0-9]*", "[", "*"]
            let path = derive(table: table, lookups: lookups, classifier: classifier, meteredPatterns: patterns)
            require(path.state != .unknown, "derive returned unknown")
            require(
                path.isReachable == (path.ipv4 || path.ipv6),
                "state \(path.state) with ipv4 \(path.ipv4) ipv6 \(path.ipv6)")
            require(path.isReachable || path.transport == TransportSet(), "a transport while unreachable")
            require(!path.isDataMetered || path.isReachable, "metered while unreachable")
            let indices = path.interfaces.map(\.index)
            require(indices == indices.sorted() && Set(indices).count == indices.count, "interfaces \(indices)")
            require(path.interfaces.count == table.links.values.filter { !$0.isLoopback }.count, "interfaces lost")

            let snapshot = RoutingSnapshot(table)
            for (lookup, counted) in [(lookups.ipv4, path.ipv4), (lookups.ipv6, path.ipv6)] {
                let verdict = RouteVerdict(judging: lookup, by: snapshot)
                if case .routable(let name, let source) = verdict, case .route(_, let index?, let answered) = lookup {
                    require(name == snapshot.interfaceNames[index] ?? "lo", "verdict names \(name)")
                    require(source == nil || source == answered, "verdict's source \(String(describing: source))")
                }
                // One route rule: a family the path counts is one the probes would route to.
                if counted { require(verdict != .noRoute && verdict != .unknown, "the path counts \(lookup)") }
            }

            guard checkingJSON else { return }
            let status = ReachabilityStatus(path: path, sequence: UInt64(table.links.count), changedAt: changedAt)
            let json = status.jsonBytes()
            require(!json.contains(UInt8(ascii: "\n")), "the JSON spans lines (an SSE data line would break)")
            do {
                let decoded = try ReachabilityStatus(jsonBytes: json)
                // The path's facts are reachd's own (the cause's), not on the wire.
                var wire = status
                wire.pathFacts = PathFacts()
                require(decoded == wire, "the JSON does not read back as the same document")
            } catch {
                require(false, "the JSON does not decode: \(error)")
            }
        }
    }
}
