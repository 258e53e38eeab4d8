import ArgumentParser
import ReachableServer

extension ServerConfiguration {
    /// The server settings from `serve`'s flags, environment and defaults, validated.
    static func resolve(_ options: ServeOptions, address: ServerAddress) throws -> ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.host = try Setting.resolve(address.host, env: "REACHD_HOST", default: configuration.host)
        configuration.port = try address.resolvedPort()
        configuration.heartbeat = try Setting.resolve(
            options.heartbeat, env: "REACHD_HEARTBEAT", default: configuration.heartbeat
        )
        guard configuration.heartbeat >= 0.05 else { throw ValidationError("--heartbeat must be at least 0.05 s") }
        let policy = try Setting.resolve(options.readyWhen, env: "REACHD_READY_WHEN", default: "reachable")
        guard let readiness = ReadinessPolicy(rawValue: policy) else {
            throw ValidationError("--ready-when is reachable or always, not \(policy)")
        }
        configuration.readiness = readiness
        configuration.maxConnections = try Setting.resolve(
            options.maxConnections, env: "REACHD_MAX_CONNECTIONS", default: configuration.maxConnections
        )
        guard configuration.maxConnections >= 1 else { throw ValidationError("--max-connections must be at least 1") }
        configuration.maxConnectionsPerIP = try Setting.resolve(
            options.maxConnectionsPerIp, env: "REACHD_MAX_CONNECTIONS_PER_IP", default: 0
        )
        guard configuration.maxConnectionsPerIP >= 0 else {
            throw ValidationError("--max-connections-per-ip must be ≥ 0")
        }
        configuration.connectionTimeout = try Setting.resolve(
            options.connectionTimeout, env: "REACHD_CONNECTION_TIMEOUT", default: configuration.connectionTimeout
        )
        guard configuration.connectionTimeout >= 1 else { throw ValidationError("--connection-timeout must be ≥ 1") }
        configuration.connectionMemoryLimit = try Setting.resolve(
            options.connectionMemory, env: "REACHD_CONNECTION_MEMORY", default: configuration.connectionMemoryLimit
        )
        guard (4096...1_048_576).contains(configuration.connectionMemoryLimit) else {
            throw ValidationError("--connection-memory must be 4096...1048576 bytes")
        }
        configuration.shutdownTimeout = try Setting.resolve(
            options.shutdownTimeout, env: "REACHD_SHUTDOWN_TIMEOUT", default: configuration.shutdownTimeout
        )
        guard configuration.shutdownTimeout > 0 else { throw ValidationError("--shutdown-timeout must be > 0") }
        configuration.threads = try Setting.resolve(
            options.threads, env: "REACHD_THREADS", default: configuration.threads)
        guard (1...64).contains(configuration.threads) else { throw ValidationError("--threads must be 1...64") }
        return configuration
    }
}
