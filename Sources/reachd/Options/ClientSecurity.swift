import ArgumentParser
import Glibc
import ReachdClient

/// How the client commands (`status`, `check`, `watch`) reach a reachd with a web config:
/// HTTPS and its verification, and basic auth — each from its flag, else its variable
/// (`REACHD_TLS`, `REACHD_CACERT`, `REACHD_INSECURE`, `REACHD_USER`).
struct ClientSecurity: ParsableArguments {
    @Flag(Settings.tls) var tls = false

    @Option(Settings.cacert) var cacert: String?

    @Flag(Settings.insecure) var insecure = false

    @Option(Settings.user) var user: String?

    /// What the flags and the environment ask for, resolved once.
    struct Resolved {
        /// `nil`: plain HTTP.
        var tls: ClientTLS?
        var user: String?
    }

    func validate() throws {
        _ = try resolved()
    }

    /// The flags, else the variables. `--cacert` and `--insecure` exclude each other; a flag of
    /// one wins over the other's variable, as over its own.
    func resolved() throws -> Resolved {
        guard !(insecure && cacert != nil) else {
            throw ValidationError("--insecure and --cacert exclude each other")
        }
        let caFile = try cacert ?? (insecure ? nil : Settings.cacert.value(nil))
        let noVerification = try insecure || (cacert == nil && Settings.insecure.resolveSwitch(false))
        if noVerification, caFile != nil {
            throw ValidationError(
                "\(Settings.insecure.environment) and \(Settings.cacert.environment) exclude each other")
        }
        if let caFile, access(caFile, R_OK) != 0 {
            let reason = String(cString: strerror(errno))
            throw ValidationError(
                "\(Settings.cacert.source(flagGiven: cacert != nil)): cannot read \(caFile): \(reason)")
        }
        let asksTLS = try Settings.tls.resolveSwitch(tls) || caFile != nil || noVerification
        return Resolved(
            tls: asksTLS ? ClientTLS(caFile: caFile, insecure: noVerification) : nil,
            user: try credentials())
    }

    /// `--user`, else `REACHD_USER`; `nil` when neither is set. A value without a colon is
    /// refused without repeating it: it may be the password alone.
    private func credentials() throws -> String? {
        guard let credentials = try Settings.user.value(user) else { return nil }
        guard credentials.contains(":") else {
            throw ValidationError(
                "\(user != nil ? "--\(Settings.user.flag)" : Settings.user.environment) must be NAME:PASSWORD")
        }
        return credentials
    }

    /// Sets the client's TLS and credentials; says on stderr when nothing is verified.
    func configure(_ client: inout LocalHTTPClient) throws {
        let resolved = try resolved()
        client.tls = resolved.tls
        client.user = resolved.user
        if resolved.tls?.insecure == true {
            Output.write("reachd: --insecure: reachd's certificate is not verified\n", to: 2)
        }
    }
}
