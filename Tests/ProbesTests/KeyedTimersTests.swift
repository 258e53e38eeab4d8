import Testing

@testable import Probes

/// The engine's keyed timers by number: one per key, replaced by the next, cleared when it runs;
/// each source's items apart from the others'.
@Suite struct KeyedTimersTests {
    @Test func eachKeyHoldsItsLatestNumberUntilCleared() {
        var timers = KeyedTimers()
        let target = EngineTimerKey(.targets, item: 9_999)
        #expect(timers[target] == nil)
        timers[target] = 7
        #expect(timers[target] == 7)
        timers[target] = 12  // replaced
        #expect(timers[target] == 12)
        // The items below it, never set, have none; nor has the same item of another source.
        #expect(timers[EngineTimerKey(.targets, item: 0)] == nil)
        #expect(timers[EngineTimerKey(.targets, item: 9_998)] == nil)
        #expect(timers[EngineTimerKey(.nameservers, item: 9_999)] == nil)
        timers[target] = nil
        #expect(timers[target] == nil)
    }

    @Test func theSourcesNumberTheirItemsApart() {
        var timers = KeyedTimers()
        let sources: [EngineTimerKey.Source] = [.targets, .connectivity, .uplinks, .nameservers]
        for (number, source) in sources.enumerated() { timers[EngineTimerKey(source, item: 3)] = UInt64(number + 1) }
        for (number, source) in sources.enumerated() {
            #expect(timers[EngineTimerKey(source, item: 3)] == UInt64(number + 1))
        }
        // Clearing an item never set, beyond every item set, changes nothing.
        timers[EngineTimerKey(.uplinks, item: 50)] = nil
        #expect(timers[EngineTimerKey(.uplinks, item: 50)] == nil)
        #expect(timers[EngineTimerKey(.uplinks, item: 3)] == 3)
    }
}
