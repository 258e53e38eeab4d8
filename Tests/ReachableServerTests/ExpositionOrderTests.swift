import Foundation
import Testing

@testable import ReachableServer

/// `/metrics` in one order whatever swift-prometheus' dictionaries did: families by name, series
/// by labels, a histogram's buckets kept together and in their order.
struct ExpositionOrderTests {
    @Test func familiesAndSeriesAreSortedAndHistogramsKeepTheirBuckets() {
        let text = """
            # HELP reachd_z z
            # TYPE reachd_z gauge
            reachd_z{a="2"} 1.0
            reachd_z{a="1"} 0.0
            # HELP reachd_h h
            # TYPE reachd_h histogram
            reachd_h_bucket{t="b",le="0.5"} 1
            reachd_h_bucket{t="b",le="10.0"} 1
            reachd_h_bucket{t="b",le="+Inf"} 1
            reachd_h_sum{t="b"} 0.1
            reachd_h_count{t="b"} 1
            reachd_h_bucket{t="a",le="0.5"} 0
            reachd_h_bucket{t="a",le="10.0"} 0
            reachd_h_bucket{t="a",le="+Inf"} 0
            reachd_h_sum{t="a"} 0.0
            reachd_h_count{t="a"} 0
            # TYPE reachd_a counter
            reachd_a 3

            """
        let ordered = String(decoding: ExpositionOrder.ordered(Array(text.utf8)), as: UTF8.self)
        #expect(
            ordered == """
                # TYPE reachd_a counter
                reachd_a 3
                # HELP reachd_h h
                # TYPE reachd_h histogram
                reachd_h_bucket{t="a",le="0.5"} 0
                reachd_h_bucket{t="a",le="10.0"} 0
                reachd_h_bucket{t="a",le="+Inf"} 0
                reachd_h_sum{t="a"} 0.0
                reachd_h_count{t="a"} 0
                reachd_h_bucket{t="b",le="0.5"} 1
                reachd_h_bucket{t="b",le="10.0"} 1
                reachd_h_bucket{t="b",le="+Inf"} 1
                reachd_h_sum{t="b"} 0.1
                reachd_h_count{t="b"} 1
                # HELP reachd_z z
                # TYPE reachd_z gauge
                reachd_z{a="1"} 0.0
                reachd_z{a="2"} 1.0

                """)
    }

    @Test func twoMetricsObjectsWithTheSameSeriesRenderTheSameText() {
        let one = ServerMetrics(version: "1", configured: .init(timeIntervalSince1970: 0))
        let other = ServerMetrics(version: "1", configured: .init(timeIntervalSince1970: 0))
        for metrics in [one, other] {
            for target in ["db", "web", "cache"] { metrics.recordProbe(target: target, duration: .zero, failure: nil) }
        }
        #expect(one.render(sseClients: 0) == other.render(sseClients: 0))
    }
}
