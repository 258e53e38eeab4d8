import Testing

@testable import ReachableServer

/// A target's histograms, kept inline in its series (issue 28's RSS per target): the buckets, the
/// count and the sum in nanoseconds say what the `Duration`s recorded were.
struct DurationCountsTests {
    @Test func eachValueLandsInTheFirstBucketAtLeastItAndTheSumKeepsEveryNanosecond() {
        var counts = ProbeDurationCounts()
        let bounds = TargetSeries.probeBuckets
        counts.record(.milliseconds(5), bounds: bounds)  // on a bound: that bucket (`le`)
        counts.record(.milliseconds(7), bounds: bounds)
        counts.record(.seconds(11), bounds: bounds)  // above every bound: only +Inf
        counts.record(.nanoseconds(1), bounds: bounds)
        #expect(counts.count == 4)
        #expect(counts.sum == .seconds(11) + .milliseconds(12) + .nanoseconds(1))
        #expect(counts.cumulative == [2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3])
    }

    @Test func theBucketsAreAsManyAsTheirBounds() {
        #expect(ProbeDurationCounts().perBucket.count == TargetSeries.probeBuckets.count)
        #expect(RoundTripCounts().perBucket.count == TargetSeries.roundTripBuckets.count)
    }

    @Test func aNegativeDurationAddsNothingToTheSum() {
        var counts = RoundTripCounts()
        counts.record(.milliseconds(-3), bounds: TargetSeries.roundTripBuckets)
        #expect(counts.sum == .zero)
        #expect(counts.cumulative.first == 1)
    }
}
