import Testing

@testable import ReachableServer

struct HTTPRequestTests {
    private let request = HTTPRequest(
        method: "GET", path: "/events", version: "HTTP/1.1",
        query: [
            .init(name: "last_event_id", value: "7"), .init(name: "flag"), .init(name: "last_event_id", value: "8"),
        ],
        headers: [HTTPField("Host", "localhost"), HTTPField("last-event-id", "42"), HTTPField("Last-Event-ID", "43")]
    )

    @Test func headerNamesAreCaseInsensitiveAndTheFirstOneWins() {
        #expect(request.header("Last-Event-ID") == "42")
        #expect(request.header("HOST") == "localhost")
        #expect(request.header("Accept") == nil)
    }

    @Test func queryValuesAreLookedUpByExactNameFirstOneWinning() {
        #expect(request.queryValue("last_event_id") == "7")
        #expect(request.queryValue("flag") == nil)
        #expect(request.queryValue("LAST_EVENT_ID") == nil)
    }
}
