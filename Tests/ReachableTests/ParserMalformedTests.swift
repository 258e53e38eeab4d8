import CMnl
import Glibc
import Reachable
import Testing

/// A truncated or malformed message is counted and skipped, never trusted; the valid messages
/// around it are still read.
@Suite struct ParserMalformedTests {
    private static let before = Messages.veth(index: 2, name: "eth0")
    private static let after = MessageBuilder.address(index: 2, "198.18.0.2", prefix: 24)

    /// Parses `before + bad + after` and checks the two good ones survive.
    private func expectSkipped(
        _ bad: [UInt8], malformed: Int = 1, unknown: Int = 0, _ comment: Comment? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        var parser = NetlinkParser()
        let envelopes = parser.parse(Self.before + bad + Self.after)
        #expect(parser.malformedCount == malformed, comment, sourceLocation: sourceLocation)
        #expect(parser.unknownCount == unknown, comment, sourceLocation: sourceLocation)
        #expect(envelopes.count == 2, comment, sourceLocation: sourceLocation)
        guard envelopes.count == 2 else { return }
        guard case .link(let link) = envelopes[0].message, case .address(let address) = envelopes[1].message else {
            Issue.record("the neighbours did not parse: \(envelopes)", sourceLocation: sourceLocation)
            return
        }
        #expect(link.name == "eth0", sourceLocation: sourceLocation)
        #expect(address.description == "198.18.0.2/24", sourceLocation: sourceLocation)
    }

    @Test func emptyDatagramYieldsNothing() {
        var parser = NetlinkParser()
        #expect(parser.parse([]).isEmpty)
        #expect(parser.malformedCount == 0)
    }

    @Test func truncatedHeaderIsCounted() {
        var parser = NetlinkParser()
        #expect(parser.parse(Array(Self.before.prefix(10))).isEmpty)
        #expect(parser.malformedCount == 1)
        // A valid message followed by a stray partial header: the first is kept.
        let envelopes = parser.parse(Self.before + [1, 2, 3, 4, 5, 6, 7, 8])
        #expect(envelopes.count == 1)
        #expect(parser.malformedCount == 2, "counted across datagrams")
    }

    @Test func messageLengthLargerThanTheDatagramIsCounted() {
        var claimsTooMuch = Self.after
        claimsTooMuch.setMessageLength(4096)
        var parser = NetlinkParser()
        let envelopes = parser.parse(Self.before + claimsTooMuch)
        #expect(envelopes.count == 1, "the message before it is kept")
        #expect(parser.malformedCount == 1)

        // The same message cut short by the datagram's end.
        var cut = NetlinkParser()
        #expect(cut.parse(Self.before + Self.after.prefix(30)).count == 1)
        #expect(cut.malformedCount == 1)
    }

    /// libmnl's `mnl_nlmsg_ok` compares `(int)nlmsg_len <= len`: a length of 2 GiB or more is
    /// negative there and passes. The parser must not follow it (in a child process, because
    /// following it reads far outside the datagram and crashes).
    @Test func messageLengthOfTwoGigabytesOrMoreIsCountedNotFollowed() async {
        await #expect(processExitsWith: .success) {
            var huge = MessageBuilder.address(index: 2, "198.18.0.9", prefix: 24)
            huge.setMessageLength(0x9FD8_B96B)
            var parser = NetlinkParser()
            let envelopes = parser.parse(Messages.veth() + huge + [UInt8](repeating: 0, count: 32))
            exit(envelopes.count == 1 && parser.malformedCount == 1 ? 0 : 1)
        }
    }

    @Test(arguments: [0, 4, 15])
    func messageLengthSmallerThanItsHeaderStopsFraming(length: Int) {
        var bad = Self.after
        bad.setMessageLength(UInt32(length))
        var parser = NetlinkParser()
        let envelopes = parser.parse(Self.before + bad + Self.after)
        #expect(envelopes.count == 1, "nothing after an unframeable header can be trusted")
        #expect(parser.malformedCount == 1)
    }

    @Test func payloadShorterThanItsFixedHeaderIsCounted() {
        let shortLink = MessageBuilder.message(type: UInt16(RTM_NEWLINK)) { header in
            _ = mnl_nlmsg_put_extra_header(header, 8)  // ifinfomsg is 16
        }
        expectSkipped(shortLink)
        let shortRoute = MessageBuilder.message(type: UInt16(RTM_NEWROUTE)) { header in
            _ = mnl_nlmsg_put_extra_header(header, 8)  // rtmsg is 12
        }
        expectSkipped(shortRoute)
        let shortError = MessageBuilder.message(type: UInt16(NLMSG_ERROR)) { header in
            _ = mnl_nlmsg_put_extra_header(header, 4)  // nlmsgerr is 20
        }
        expectSkipped(shortError)
    }

    @Test(arguments: [UInt16(200), UInt16(0xFFFF), UInt16(2), UInt16(0)])
    func attributeLengthPastTheEndOrTooShortIsCounted(length: UInt16) {
        var bad = Messages.veth(index: 9, name: "bad0")
        let offsets = bad.attributeOffsets(fixedHeader: MemoryLayout<ifinfomsg>.size)
        bad.patch(length, at: offsets[1])  // IFLA_MTU
        expectSkipped(bad)
    }

    @Test func lastAttributeRunningPastTheMessageIsCounted() {
        var bad = Messages.veth(index: 9, name: "bad0")
        let last = bad.attributeOffsets(fixedHeader: MemoryLayout<ifinfomsg>.size).last!
        bad.patch(bad.uint16(at: last) + 8, at: last)
        expectSkipped(bad)
    }

    /// The message says it is 41 bytes; its last attribute claims 20 bytes from offset 24, so it
    /// runs three bytes past the end of the message (and of the datagram). Those three bytes are
    /// not the message's: the address must not be read from them.
    @Test func attributeRunningPastAnUnalignedMessageEndIsCounted() {
        var bytes = MessageBuilder.address(index: 2, "2001:db8::abc:def", prefix: 64, flagsAttribute: false)
        #expect(bytes.count == 44)
        bytes.setMessageLength(41)
        var parser = NetlinkParser()
        let envelopes = bytes.withUnsafeBytes { raw in
            parser.parse(UnsafeRawBufferPointer(rebasing: raw[0..<41]))
        }
        #expect(envelopes.isEmpty, "accepted an address whose last 3 bytes lie outside the datagram: \(envelopes)")
        #expect(parser.malformedCount == 1)
    }

    /// The same overhang inside a datagram: the three bytes after the message's end are the
    /// padding before the next message, not part of the address.
    @Test func attributeRunningIntoThePaddingBeforeTheNextMessageIsCounted() {
        var bad = MessageBuilder.address(index: 2, "2001:db8::abc:def", prefix: 64, flagsAttribute: false)
        bad.setMessageLength(41)
        var parser = NetlinkParser()
        let envelopes = parser.parse(Self.before + bad + Self.after)
        #expect(envelopes.count == 2, "\(envelopes)")
        #expect(parser.malformedCount == 1)
    }

    @Test func missingInterfaceNameIsCounted() {
        expectSkipped(MessageBuilder.link(index: 9, name: nil, flags: LinkFlags.running))
        expectSkipped(MessageBuilder.link(removed: true, index: 9, name: nil, flags: 0), "RTM_DELLINK too")
    }

    @Test func interfaceNameWithoutTerminatorIsCounted() {
        expectSkipped(
            MessageBuilder.link(index: 9, name: nil, flags: LinkFlags.running) { header in
                MessageBuilder.put(header, type: UInt16(IFLA_IFNAME), Array("eth9".utf8))
            })
        expectSkipped(
            MessageBuilder.link(index: 9, name: nil, flags: LinkFlags.running) { header in
                MessageBuilder.put(header, type: UInt16(IFLA_IFNAME), [])
            })
    }

    @Test(arguments: WrongSize.allCases)
    func attributeOfTheWrongSizeIsCounted(_ example: WrongSize) {
        expectSkipped(example.message(), Comment(rawValue: example.rawValue))
    }

    @Test func addressOfAnUnknownFamilyOrWithoutAddressIsCounted() {
        let packet = MessageBuilder.message(type: UInt16(RTM_NEWADDR)) { header in
            let info = mnl_nlmsg_put_extra_header(header, MemoryLayout<ifaddrmsg>.size)!
                .assumingMemoryBound(to: ifaddrmsg.self)
            info.pointee.ifa_family = UInt8(AF_PACKET)
            info.pointee.ifa_index = 2
            MessageBuilder.put(header, type: UInt16(IFA_ADDRESS), [1, 2, 3, 4])
        }
        expectSkipped(packet)
        let noAddress = MessageBuilder.message(type: UInt16(RTM_NEWADDR)) { header in
            let info = mnl_nlmsg_put_extra_header(header, MemoryLayout<ifaddrmsg>.size)!
                .assumingMemoryBound(to: ifaddrmsg.self)
            info.pointee.ifa_family = UInt8(AF_INET)
            info.pointee.ifa_index = 2
            mnl_attr_put_u32(header, UInt16(IFA_FLAGS), 0)
        }
        expectSkipped(noAddress)
    }

    @Test func brokenNestedLinkInfoIsCounted() {
        expectSkipped(
            MessageBuilder.link(index: 9, name: "bad0", flags: LinkFlags.running) { header in
                // IFLA_LINKINFO whose only inner attribute claims more than the nest holds.
                MessageBuilder.put(
                    header, type: UInt16(IFLA_LINKINFO), [40, 0, UInt8(IFLA_INFO_KIND), 0, 118, 101, 116, 104])
            })
        expectSkipped(
            MessageBuilder.link(index: 9, name: "bad0", flags: LinkFlags.running) { header in
                MessageBuilder.put(header, type: UInt16(IFLA_LINKINFO), [1, 2])  // shorter than an attribute header
            })
    }

    @Test func brokenMultipathNextHopIsCounted() {
        var hops = MessageBuilder.nextHops([(2, "198.18.0.1"), (3, "198.18.1.1")])
        hops.patch(UInt16(200), at: 16)  // the second hop's rtnh_len runs past the attribute
        expectSkipped(
            MessageBuilder.route { header in
                MessageBuilder.put(header, type: UInt16(RTA_MULTIPATH.rawValue), hops)
            })
        var tiny = MessageBuilder.nextHops([(2, "198.18.0.1")])
        tiny.patch(UInt16(4), at: 0)  // smaller than struct rtnexthop
        expectSkipped(
            MessageBuilder.route { header in
                MessageBuilder.put(header, type: UInt16(RTA_MULTIPATH.rawValue), tiny)
            })
        expectSkipped(
            MessageBuilder.route { header in
                MessageBuilder.put(header, type: UInt16(RTA_MULTIPATH.rawValue), [1, 2, 3, 4])  // half a next hop
            })
    }

    @Test func unknownMessageTypesAreCountedAndSkipped() {
        let neighbour = MessageBuilder.message(type: UInt16(RTM_NEWNEIGH)) { header in
            _ = mnl_nlmsg_put_extra_header(header, 12)
        }
        let qdisc = MessageBuilder.message(type: UInt16(RTM_NEWQDISC)) { header in
            _ = mnl_nlmsg_put_extra_header(header, 20)
        }
        let invented = MessageBuilder.message(type: 0x7777) { _ in }
        var parser = NetlinkParser()
        let envelopes = parser.parse(Self.before + neighbour + qdisc + Self.after + invented)
        #expect(envelopes.count == 2)
        #expect(parser.unknownCount == 3)
        #expect(parser.malformedCount == 0)
    }

    @Test func controlMessagesAreUnderstood() {
        let noop = MessageBuilder.message(type: UInt16(NLMSG_NOOP)) { _ in }
        let netconf = MessageBuilder.message(type: UInt16(RTM_NEWNETCONF)) { header in
            _ = mnl_nlmsg_put_extra_header(header, 4)
        }
        var parser = NetlinkParser()
        let envelopes = parser.parse(
            noop + MessageBuilder.rule() + netconf + MessageBuilder.error(0, sequence: 7) + MessageBuilder.error(-EBUSY)
                + MessageBuilder.done(sequence: 9)
        )
        #expect(
            envelopes.map(\.message) == [
                .other(type: UInt16(RTM_NEWRULE)), .other(type: UInt16(RTM_NEWNETCONF)), .error(code: 0),
                .error(code: -EBUSY), .done,
            ])
        #expect(envelopes[2].sequence == 7)
        #expect(envelopes[4].sequence == 9)
        #expect(envelopes[4].flags & UInt16(NLM_F_MULTI) != 0)
        #expect(parser.unknownCount == 0, "NLMSG_NOOP is skipped silently")
        #expect(parser.malformedCount == 0)
    }

    @Test func skippedMessagesLeaveTheTableUntouched() {
        var badAddress = MessageBuilder.address(index: 2, "198.18.0.9", prefix: 24)
        let flags = badAddress.attributeOffsets(fixedHeader: MemoryLayout<ifaddrmsg>.size).last!
        badAddress.patch(UInt16(12), at: flags)  // IFA_FLAGS now overhangs the message by 4 bytes
        var parser = NetlinkParser()
        var table = NetworkTable()
        for envelope in parser.parse(Self.before + badAddress + Self.after) { table.apply(envelope.message) }
        #expect(parser.malformedCount == 1)
        #expect(table.links.count == 1)
        #expect(table.addresses.map(\.description) == ["198.18.0.2/24"])
    }
}

/// One attribute of the wrong size per case, in an otherwise kernel-shaped message.
enum WrongSize: String, CaseIterable, Sendable {
    case ipv6AddressOfFiveBytes
    case ipv4AddressOfFiveBytesNextToValidLocal
    case ipv4LocalOfThreeBytes
    case addressFlagsOfTwoBytes
    case operstateOfFourBytes
    case routeTableOfTwoBytes
    case routePriorityOfEightBytes
    case routeOutputInterfaceOfTwoBytes
    case ipv4PreferredSourceOfSixteenBytes
    case ipv6PreferredSourceOfFourBytes

    func message() -> [UInt8] {
        switch self {
        case .ipv6AddressOfFiveBytes:
            return MessageBuilder.message(type: UInt16(RTM_NEWADDR)) { header in
                let info = mnl_nlmsg_put_extra_header(header, MemoryLayout<ifaddrmsg>.size)!
                    .assumingMemoryBound(to: ifaddrmsg.self)
                info.pointee.ifa_family = UInt8(AF_INET6)
                info.pointee.ifa_prefixlen = 64
                info.pointee.ifa_index = 2
                MessageBuilder.put(header, type: UInt16(IFA_ADDRESS), [0x20, 0x01, 0x0d, 0xb8, 0x00])
            }
        case .ipv4AddressOfFiveBytesNextToValidLocal:
            return MessageBuilder.message(type: UInt16(RTM_NEWADDR)) { header in
                let info = mnl_nlmsg_put_extra_header(header, MemoryLayout<ifaddrmsg>.size)!
                    .assumingMemoryBound(to: ifaddrmsg.self)
                info.pointee.ifa_family = UInt8(AF_INET)
                info.pointee.ifa_prefixlen = 24
                info.pointee.ifa_index = 2
                MessageBuilder.put(header, type: UInt16(IFA_ADDRESS), [198, 18, 0, 7, 0])
                MessageBuilder.put(header, type: UInt16(IFA_LOCAL), [198, 18, 0, 7])
            }
        case .ipv4LocalOfThreeBytes:
            return MessageBuilder.address(index: 2, "198.18.0.7", prefix: 24) { header in
                MessageBuilder.put(header, type: UInt16(IFA_LOCAL), [198, 18, 0])
            }
        case .addressFlagsOfTwoBytes:
            return MessageBuilder.address(index: 2, "198.18.0.7", prefix: 24, flagsAttribute: false) { header in
                mnl_attr_put_u16(header, UInt16(IFA_FLAGS), 0x80)
            }
        case .operstateOfFourBytes:
            return MessageBuilder.link(index: 9, name: "bad0", flags: LinkFlags.running, operState: nil) { header in
                mnl_attr_put_u32(header, UInt16(IFLA_OPERSTATE), UInt32(IF_OPER_UP))
            }
        case .routeTableOfTwoBytes:
            return MessageBuilder.route(outputInterface: 2) { header in
                mnl_attr_put_u16(header, UInt16(RTA_TABLE.rawValue), 254)
            }
        case .routePriorityOfEightBytes:
            return MessageBuilder.route(outputInterface: 2) { header in
                mnl_attr_put_u64(header, UInt16(RTA_PRIORITY.rawValue), 100)
            }
        case .routeOutputInterfaceOfTwoBytes:
            return MessageBuilder.route { header in
                mnl_attr_put_u16(header, UInt16(RTA_OIF.rawValue), 2)
            }
        case .ipv4PreferredSourceOfSixteenBytes:
            return MessageBuilder.route(outputInterface: 2) { header in
                MessageBuilder.put(header, type: UInt16(RTA_PREFSRC.rawValue), IPAddress("2001:db8::1")!.bytes)
            }
        case .ipv6PreferredSourceOfFourBytes:
            return MessageBuilder.route(family: AF_INET6, outputInterface: 2) { header in
                MessageBuilder.put(header, type: UInt16(RTA_PREFSRC.rawValue), [198, 18, 0, 2])
            }
        }
    }
}
