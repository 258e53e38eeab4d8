/// The routing-table entries one batch of notifications removed (and did not add back), so a
/// route lookup answered by one of them is known to be stale.
///
/// IPv4 announces a removal before it unlinks the entry (`fib_table_delete` sends
/// `RTM_DELROUTE`, then calls `fib_remove_alias`): a lookup asked the moment the notification
/// is read can still take the route being removed, and no later notification corrects it. Seen
/// as a document that stayed `reachable` after `ip route del default`, about one run in six of
/// an e2e test that removes and restores the default route 100 times.
struct RemovedRoutes {
    private var entries: Set<RouteRecord.Entry> = []

    /// Looks at one message of the batch, in order: a route added again is not removed.
    mutating func note(_ message: NetlinkMessage) {
        switch message {
        case .routeRemoved(let route): entries.insert(route.entry)
        case .route(let route): entries.remove(route.entry)
        default: break
        }
    }

    var isEmpty: Bool { entries.isEmpty }

    func contains(_ entry: RouteRecord.Entry) -> Bool { entries.contains(entry) }
}
