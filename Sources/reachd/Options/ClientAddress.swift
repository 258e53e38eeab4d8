/// Where the client commands (`status`, `watch`, `check`) ask. They take `--host` and `--port`
/// as `ServerAddress`, the same type as serving: ArgumentParser hands a subcommand the option
/// group its parent (`reachd`, whose `ServeOptions` hold one) already parsed only when the
/// types are the same, so a group of its own would never see the flags.
extension ServerAddress {
    /// The serving address, or loopback when serving on all; `localhost` stays a name, tried as
    /// both loopback addresses (`LocalHTTPClient`).
    func clientHost() throws -> String {
        switch try Settings.host.value(host) ?? Self.loopback {
        case "0.0.0.0": return Self.loopback
        case "::": return "::1"
        case let host: return host
        }
    }
}
