import Prometheus

extension MetricNameDescriptor {
    /// Every family reachd shows is `reachd_…`: the one place that says so.
    static func reachd(_ name: String, help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "reachd", metricName: name, unitName: "", helpText: help)
    }
}
