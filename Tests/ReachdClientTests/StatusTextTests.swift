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
