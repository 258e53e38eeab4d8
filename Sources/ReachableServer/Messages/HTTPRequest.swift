/// A request as a route sees it: plain values, read from the daemon before the route runs.
struct HTTPRequest: Sendable, Equatable {
    /// One `name=value` pair of the query string, percent-escapes kept as sent (`value` is `nil`
    /// for a bare `name`).
    struct QueryItem: Sendable, Equatable {
        var name: String
        var value: String?
    }

    var method: String
    /// The path without its query string.
    var path: String
    var version: String
    var query: [QueryItem] = []
    var headers: [HTTPField] = []
    /// Why the request's framing is malformed (RFC 9112), found by the daemon before routing;
    /// such a request is answered `400` and its connection closed.
    var malformed: String?

    /// The value of the header `name` (case-insensitive), e.g. `Last-Event-ID`.
    func header(_ name: String) -> String? {
        headers.value(of: name)
    }

    /// The first value of the query parameter `name`, e.g. `last_event_id`.
    func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }
}
