import Reachable

// A failure never removes a series: a family's series exist while the family is among the
// addresses of the name's last successful resolution — one the document shows, or one it shows
// as `null` only because the name does not resolve now (`unresolvedFamilies`) — so an alert on
// `… == 0` or `state="limited" == 1` fires when the name breaks instead of losing its series.

extension TargetStatus {
    /// Whether `family` has its series (`reachd_target_family_up`, `reachd_target_impaired`);
    /// one the name does not resolve for reads 0, as the target does.
    func hasSeries(of family: AddressFamily) -> Bool {
        self[family] != nil || unresolvedFamilies.contains(family)
    }
}

extension ConnectivityStatus {
    /// The state `family`'s series read 1 on: its own, or the check's while the name does not
    /// resolve (`limited`); `nil` while the host has no address of it.
    func seriesState(of family: AddressFamily) -> State? {
        self[family]?.state ?? (unresolvedFamilies.contains(family) ? state : nil)
    }
}
