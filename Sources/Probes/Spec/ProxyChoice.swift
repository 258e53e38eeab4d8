public import Reachable

/// Which proxy, if any, an `http(s)://` check goes through: reachd decides it itself and hands
/// libcurl exactly that, so the route question, the families and the document agree with what
/// curl connects to (curl would read `no_proxy` again, and ignores uppercase `HTTP_PROXY`).
///
/// Fixed for the process's life: the environment is the process's (a change needs a restart).
public enum ProxyChoice: Sendable, Hashable {
    /// curl's variables, read once at start (`ProxyEnvironment`).
    case environment(ProxyEnvironment)
    /// `--proxy URL`: one proxy for every `http(s)://` check, `no_proxy` ignored.
    case always(ProxyURL)
    /// `--proxy none`, or no proxy anywhere: every check connects to its host itself.
    case never

    /// The proxy a check of `url` out of `egress` goes through; `nil`: it connects to the URL's
    /// host itself. A check pinned to an interface never uses one (it tests that interface's own
    /// way out), and only the kinds that take a proxy (`ProbeKind.takesProxy`) do.
    public func proxy(for url: TargetURL, via egress: Egress = .kernelChoice) -> ProxyURL? {
        guard egress == .kernelChoice, url.kind.takesProxy else { return nil }
        switch self {
        case .never: return nil
        case .always(let proxy): return proxy
        case .environment(let environment): return environment.proxy(for: url)
        }
    }

    /// `--proxy`'s text (`none` or a proxy URL), else the environment's variables.
    ///
    /// - Parameters:
    ///   - option: `--proxy` (or `REACHD_PROXY`) as given; `nil` when not set.
    ///   - environment: the process's environment.
    /// - Throws: the refused URL's problem, naming where it came from (quoting it with its
    ///   credentials written `***`).
    public static func resolve(
        option: String?, environment: [String: String]
    ) throws(ProxyChoiceError) -> ProxyChoice {
        guard let option else { return .environment(try ProxyEnvironment.read(environment)) }
        if option.trimmed.lowercased() == "none" { return .never }
        switch ProxyURL.parse(option, schemeRequired: true) {
        case .success(let proxy): return .always(proxy)
        case .failure(let problem): throw ProxyChoiceError(source: nil, text: option, problem: problem)
        }
    }
}

extension ProxyChoice: CustomStringConvertible {
    /// How the start-up log names it, without credentials: `none`, `http://198.18.0.1:3128`, or
    /// the environment's, `http=http://proxy:3128 https=http://proxy:3128 no_proxy` (no_proxy: set).
    public var description: String {
        switch self {
        case .never: return "none"
        case .always(let proxy): return proxy.shown
        case .environment(let environment):
            let named = [("http", environment.http), ("https", environment.https), ("all", environment.all)]
                .compactMap { name, proxy in proxy.map { "\(name)=\($0.shown)" } }
            guard !named.isEmpty else { return "none" }
            return (named + (environment.exceptions == .none ? [] : ["no_proxy"])).joined(separator: " ")
        }
    }
}

/// curl's proxy variables as reachd reads them: `http_proxy`/`HTTP_PROXY` for `http://`,
/// `https_proxy`/`HTTPS_PROXY` for `https://`, `all_proxy`/`ALL_PROXY` for either when that is
/// unset, `no_proxy`/`NO_PROXY` for exceptions; lowercase wins, an empty variable is unset.
public struct ProxyEnvironment: Sendable, Hashable {
    public var http: ProxyURL?
    public var https: ProxyURL?
    public var all: ProxyURL?
    public var exceptions: NoProxy

    public init(http: ProxyURL? = nil, https: ProxyURL? = nil, all: ProxyURL? = nil, exceptions: NoProxy = .none) {
        self.http = http
        self.https = https
        self.all = all
        self.exceptions = exceptions
    }

    /// Reads the variables from `environment`.
    ///
    /// - Throws: a variable whose URL is not an HTTP proxy's, named.
    public static func read(_ environment: [String: String]) throws(ProxyChoiceError) -> ProxyEnvironment {
        func proxy(_ name: String) throws(ProxyChoiceError) -> ProxyURL? {
            guard let (variable, text) = value(name, in: environment) else { return nil }
            switch ProxyURL.parse(text) {
            case .success(let proxy): return proxy
            case .failure(let problem): throw ProxyChoiceError(source: variable, text: text, problem: problem)
            }
        }
        return ProxyEnvironment(
            http: try proxy("http_proxy"), https: try proxy("https_proxy"), all: try proxy("all_proxy"),
            exceptions: NoProxy(value("no_proxy", in: environment)?.text ?? ""))
    }

    /// The lowercase variable if set and not empty, else the uppercase one.
    private static func value(_ name: String, in environment: [String: String]) -> (variable: String, text: String)? {
        for variable in [name, name.uppercased()] {
            if let text = environment[variable], !text.trimmed.isEmpty { return (variable, text) }
        }
        return nil
    }

    /// The proxy for `url` (an `http://` or `https://` URL), unless `no_proxy` names its host.
    func proxy(for url: TargetURL) -> ProxyURL? {
        let named = url.scheme == .https ? https : url.scheme == .http ? http : nil
        guard let proxy = named ?? all else { return nil }
        return exceptions.matches(host: url.host, literal: url.literal) ? nil : proxy
    }
}

/// A proxy URL reachd cannot use, and where it was given (`nil`: `--proxy`/`REACHD_PROXY`, which
/// the option's own message names).
public struct ProxyChoiceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The environment variable that held it (`https_proxy`), or `nil` for `--proxy`.
    public var source: String?
    /// The URL as given, its credentials written `***` (`ProxyURL.redacted`).
    public var shownText: String
    public var problem: ProxyURL.Problem

    public init(source: String?, text: String, problem: ProxyURL.Problem) {
        self.source = source
        shownText = ProxyURL.redacted(text)
        self.problem = problem
    }

    public var description: String {
        "\(source.map { "\($0)=" } ?? "")\(shownText): \(problem)"
    }
}
