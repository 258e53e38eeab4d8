import FoundationEssentials
import Reachable
import ReachdClient
import Testing

/// The lines `reachd status` and `watch` print from a served document.
struct StatusTextTests {
    /// Found by FuzzClient on a recorded `/status`: `.063` came back as `.062`, because the time
    /// read from the document is a `Double` just below it and the format cut the fraction off.
    @Test(arguments: ["2026-11-23T16:43:45.063Z", "2026-11-23T16:43:45.058Z", "2026-11-21T22:00:00.123Z"])
    func theTimeIsPrintedAsServed(time: String) throws {
        let parsed = try ReachabilityStatus.timestampStyle.parse(time)
        #expect(ReachabilityStatus.timestampStyle.format(parsed) == time)
        let status = ReachabilityStatus(path: NetworkPath(state: .unreachable), sequence: 3, changedAt: parsed)
        #expect(StatusText.summary(status) == "\(time) #3 unreachable")
    }

    @Test func everyMillisecondOfASecondReadsBackTheSame() throws {
        for millisecond in 0..<1000 {
            let time = "2026-11-23T16:43:45." + String(String(millisecond + 1000).dropFirst()) + "Z"
            let parsed = try ReachabilityStatus.timestampStyle.parse(time)
            #expect(ReachabilityStatus.timestampStyle.format(parsed) == time)
        }
    }

    @Test func aTimeBetweenMillisecondsIsRoundedToTheNearest() {
        let date = Date(timeIntervalSince1970: 1_795_000_000.123_6)
        #expect(ReachabilityStatus.timestampStyle.format(date) == "2026-11-18T11:06:40.124Z")
    }
}

/// Found by FuzzClient (`Fuzz/Regressions/FuzzClient/control-character-printed`): names from the
/// document reached the terminal as they were. The kernel allows ESC in an interface name, so
/// whoever may create one in reachd's namespace could send a terminal commands through
/// `reachd status`.
struct StatusTextControlCharacterTests {
    @Test func controlCharactersInNamesAreShownEscaped() {
        let since = Date(timeIntervalSince1970: 0)
        let interface = InterfaceStatus(
            name: "eth\u{1B}]0;owned\u{07}", index: 2, transport: .ethernet, kind: "veth", operState: "up",
            isDefaultRoute: true, addresses: ["198.18.0.2/24"])
        #expect(StatusText.line(interface) == "  eth\\x1b]0;owned\\x07 (veth) up default-route 198.18.0.2/24")
        let target = TargetStatus(
            name: "db", url: "tcp://db:5432", state: .reachable, addresses: ["198.18.1.1"], interface: "l\u{7F}",
            since: since)
        #expect(StatusText.line(target) == "  target db tcp://db:5432 reachable via l\\x7f [198.18.1.1]")
        let unreachable = TargetStatus(
            name: "x\u{9B}", url: "host://x", state: .unreachable, reason: .dns, since: since)
        #expect(StatusText.targetsSummary([unreachable]) == "targets 0/1 reachable (x\\x9b dns)")
    }

    @Test func otherTextIsShownAsItIs() {
        let interface = InterfaceStatus(
            name: "lan-ü", index: 5, transport: .ethernet, kind: nil, operState: "down", isDefaultRoute: false,
            addresses: [])
        #expect(StatusText.line(interface) == "  lan-ü (ethernet) down")
    }
}
