/// The connectivity check's `state` in the status document (NetworkManager's and Android's states).
public enum ConnectivityState: String, Sendable, Hashable, CaseIterable {
    /// No `--connectivity-url`.
    case disabled
    /// Not checked yet.
    case unknown
    /// No usable route toward the URL's host.
    case none
    /// The check cannot get through (`reason` says why).
    case limited
    /// An answer in 200–399 that is not the expected one: a redirect, a login page.
    case portal
    /// The expected answer: the internet is there.
    case full
}
