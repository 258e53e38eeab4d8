import ReachdClient
import Testing

/// The SSE stream of `/events` as `reachd watch` reads it: events are found whatever the
/// chunks' boundaries.
struct EventStreamReaderTests {
    static let stream =
        "retry: 2000\nid: 1\nevent: status\ndata: {\"a\":1}\n\n: keep-alive\n\nid: 2\ndata: {\"b\":2}\n\n"

    @Test(arguments: [1, 2, 7, 1000])
    func everyEventWhateverTheChunks(piece: Int) {
        var reader = EventStreamReader()
        var events: [String] = []
        var rest = Array(Self.stream.utf8)[...]
        while !rest.isEmpty {
            events += reader.feed(Array(rest.prefix(piece)))
            rest = rest.dropFirst(piece)
        }
        #expect(events == ["{\"a\":1}", "{\"b\":2}"])
    }

    @Test func dataLinesOfOneEventAreJoined() {
        var reader = EventStreamReader()
        #expect(reader.feed(Array("data: one\ndata:two\n\n".utf8)) == ["one\ntwo"])
    }

    /// Found by FuzzClient (`Fuzz/Regressions/FuzzClient/utf8-cut-by-a-read`): each piece was read
    /// as UTF-8 on its own, so a character cut in two became two replacement characters — an
    /// interface named `lan-ü` was shown as `lan-??`.
    @Test(arguments: 1...8)
    func aCharacterCutByAReadStaysWhole(piece: Int) {
        var reader = EventStreamReader()
        var events: [String] = []
        var rest = Array("data: {\"name\":\"lan-ü\"}\n\n".utf8)[...]
        while !rest.isEmpty {
            events += reader.feed(Array(rest.prefix(piece)))
            rest = rest.dropFirst(piece)
        }
        #expect(events == ["{\"name\":\"lan-ü\"}"])
    }

    @Test func linesMayEndInCarriageReturnAndLineFeed() {
        var reader = EventStreamReader()
        #expect(reader.feed(Array("data: one\r".utf8)) == [])
        #expect(reader.feed(Array("\n\r\n".utf8)) == ["one"])
    }
}

/// What `reachd watch` sends back when it reconnects: the last event's id and the server's delay.
struct EventStreamReconnectionTests {
    @Test func theLastIDAndRetryAreKept() {
        var reader = EventStreamReader()
        #expect(reader.lastEventID == nil && reader.retry == nil)
        _ = reader.feed(Array(EventStreamReaderTests.stream.utf8))
        #expect(reader.lastEventID == "2")
        #expect(reader.retry == 2000)
    }

    @Test func anIDCountsOnlyOnceItsEventIsDispatched() {
        var reader = EventStreamReader()
        _ = reader.feed(Array("id: 1\ndata: a\n\nid: 2\ndata: b\n".utf8))
        #expect(reader.lastEventID == "1")
        _ = reader.feed(Array("\n".utf8))
        #expect(reader.lastEventID == "2")
    }

    @Test func aRetryThatIsNotDigitsIsIgnored() {
        var reader = EventStreamReader()
        _ = reader.feed(Array("retry: 500\n\nretry: soon\n\nretry: -1\n\nretry: 99999999999999999999999\n\n".utf8))
        #expect(reader.retry == 500)
    }
}
