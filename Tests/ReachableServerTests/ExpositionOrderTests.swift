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

    @Test func aFamilyWrittenByTwoRegistriesIsOneFamily() {
        // Two writers of one buffer naming the same family (as per-target registries once did):
        // it comes again, HELP and TYPE included, and is joined.
        let text = """
            # HELP reachd_t t
            # TYPE reachd_t histogram
            reachd_t_bucket{target="b",le="+Inf"} 1
            reachd_t_sum{target="b"} 0.1
            reachd_t_count{target="b"} 1
            # HELP reachd_up up
            # TYPE reachd_up gauge
            reachd_up{target="b"} 1.0
            # HELP reachd_up up
            # TYPE reachd_up gauge
            reachd_up{target="a"} 0.0
            # HELP reachd_t t
            # TYPE reachd_t histogram
            reachd_t_bucket{target="a",le="+Inf"} 0
            reachd_t_sum{target="a"} 0.0
            reachd_t_count{target="a"} 0

            """
        let ordered = String(decoding: ExpositionOrder.ordered(Array(text.utf8)), as: UTF8.self)
        #expect(
            ordered == """
                # HELP reachd_t t
                # TYPE reachd_t histogram
                reachd_t_bucket{target="a",le="+Inf"} 0
                reachd_t_sum{target="a"} 0.0
                reachd_t_count{target="a"} 0
                reachd_t_bucket{target="b",le="+Inf"} 1
                reachd_t_sum{target="b"} 0.1
                reachd_t_count{target="b"} 1
                # HELP reachd_up up
                # TYPE reachd_up gauge
                reachd_up{target="a"} 0.0
                reachd_up{target="b"} 1.0

                """)
    }

    @Test func everyTargetsSeriesAreInOneFamilyEach() {
        let metrics = ServerMetrics(version: "1", configured: .init(timeIntervalSince1970: 0))
        for target in ["db", "web", "cache"] { metrics.recordProbe(target: target, duration: .zero, failure: nil) }
        let text = String(decoding: metrics.render(sseClients: 0), as: UTF8.self)
        let lines = text.split(separator: "\n")
        #expect(lines.filter { $0 == "# TYPE reachd_target_transitions_total counter" }.count == 1)
        #expect(
            lines.filter { $0.hasPrefix("reachd_target_transitions_total{") } == [
                #"reachd_target_transitions_total{target="cache"} 0"#,
                #"reachd_target_transitions_total{target="db"} 0"#,
                #"reachd_target_transitions_total{target="web"} 0"#,
            ])
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
