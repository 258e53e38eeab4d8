import Glibc
public import Reachable
import Synchronization

/// The web config in force (`--web-config-file`): TLS credentials for new connections and the
/// users basic auth checks. Read whole at start (a bad file is refused) and again on `reload`
/// (SIGHUP, a change of the file or of a file it names); a reading that fails leaves the one in
/// force as it was.
///
/// Whether reachd speaks TLS at all is fixed at start: the listening socket serves one protocol,
/// so a reload that would turn TLS on or off is refused (a restart applies it).
public final class WebSecurity: Sendable {
    /// One complete reading of the files.
    struct Reading: Sendable {
        var config: WebConfig
        var tls: TLSCredentials?
        var auth: BasicAuth?
    }

    public let path: String
    /// Whether the port serves HTTPS (from the reading at start).
    public let servesTLS: Bool
    private let current: Mutex<Reading>

    /// Reads the file and every file it names.
    ///
    /// - Throws: `WebConfigError` naming the key (and line) or the file.
    public init(path: String) throws(WebConfigError) {
        self.path = path
        let reading = try Self.read(path)
        servesTLS = reading.tls != nil
        current = Mutex(reading)
    }

    /// The configuration in force.
    public var config: WebConfig { current.withLock { $0.config } }

    /// Every file a change of which is a reason to read again: the config file and those it names.
    public var watchedFiles: [String] {
        [path] + (config.tls?.files ?? [])
    }

    var tls: TLSCredentials? { current.withLock { $0.tls } }
    var auth: BasicAuth? { current.withLock { $0.auth } }

    /// Reads the files again and applies them if they are good; otherwise nothing changes.
    public func reload() -> Result<WebConfig, WebConfigError> {
        do throws(WebConfigError) {
            let reading = try Self.read(path)
            guard (reading.tls != nil) == servesTLS else {
                throw WebConfigError(
                    servesTLS
                        ? "tls_server_config was removed: turning TLS off needs a restart"
                        : "tls_server_config was added: turning TLS on needs a restart")
            }
            current.withLock { $0 = reading }
            return .success(reading.config)
        } catch {
            return .failure(error)
        }
    }

    private static func read(_ path: String) throws(WebConfigError) -> Reading {
        let text = try readFile(path, named: "web config file")
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[..<$0]).isEmpty ? "/" : String(path[..<$0]) } ?? "."
        let config: WebConfig
        do {
            config = try WebConfig.parse(yaml: String(decoding: text, as: UTF8.self), directory: directory)
        } catch {
            throw WebConfigError(error.message, line: error.line, file: path)
        }
        var reading = Reading(config: config, tls: nil, auth: BasicAuth(users: config.users))
        if let tls = config.tls {
            let clientCA = try tls.clientCAFile.map { file throws(WebConfigError) in
                (bytes: try readFile(file, named: "tls_server_config.client_ca_file"), file: file)
            }
            reading.tls = try TLSCredentials(
                certificate: try readFile(tls.certFile, named: "tls_server_config.cert_file"),
                certificateFile: tls.certFile,
                key: try readFile(tls.keyFile, named: "tls_server_config.key_file"), keyFile: tls.keyFile,
                clientCA: clientCA, clientAuth: tls.clientAuth, minVersion: tls.minVersion)
        }
        return reading
    }

    /// The files are small (a config, PEM): more than this is not one of them.
    static let maximumFileSize = 1 << 20

    private static func readFile(_ path: String, named name: String) throws(WebConfigError) -> [UInt8] {
        let bytes: [UInt8]
        do {
            bytes = try readAll(path, upTo: maximumFileSize + 1)
        } catch {
            throw WebConfigError("\(name) \(path): cannot read it: \(String(cString: strerror(error.code)))")
        }
        guard bytes.count <= maximumFileSize else {
            throw WebConfigError("\(name) \(path): larger than \(maximumFileSize) bytes")
        }
        return bytes
    }

    /// The file's bytes (through symlinks: a Secret's files are), at most `limit` of them.
    private static func readAll(_ path: String, upTo limit: Int) throws(SystemError) -> [UInt8] {
        let descriptor = OwnedDescriptor(taking: try systemCall("open") { open(path, O_RDONLY | O_CLOEXEC) })
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while bytes.count < limit {
            let count = try systemCall("read") { Glibc.read(descriptor.rawValue, &chunk, chunk.count) }
            if count == 0 { break }
            bytes += chunk[..<count]
        }
        return bytes
    }
}
