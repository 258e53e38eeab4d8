/// The options only the client commands (`status`, `check`, `watch`) have: how they reach a
/// reachd with a web config. Each reads its variable too, so an image's `HEALTHCHECK`
/// (`reachd check --live`) keeps working once TLS is on: the environment says it once.
extension Settings {
    static let tls = Setting<Bool>(
        switch: "tls", "Ask over HTTPS (a reachd whose --web-config-file has tls_server_config)")

    static let cacert = Setting<String>(
        "cacert",
        "PEM file of the CAs that verify reachd's certificate, instead of the system's; implies --tls",
        default: "", defaultText: "the system's CAs", invalid: "must be a path", parse: { $0 }
    )

    static let insecure = Setting<Bool>(
        switch: "insecure", "Do not verify reachd's certificate (said on stderr); implies --tls")

    /// Its variable keeps the password out of `ps`. A refused value is never echoed: it may be the
    /// password alone (`ClientSecurity.validate`).
    static let user = Setting<String>(
        "user", "Basic auth credentials, NAME:PASSWORD", default: "", defaultText: "none",
        invalid: "must be NAME:PASSWORD", parse: { $0 }
    )
}
