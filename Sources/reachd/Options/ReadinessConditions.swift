import ArgumentParser
import Probes
import Reachable
import ReachableServer

extension ProbeConfiguration {
    /// Refuses a condition these probes could never satisfy (`--ready-when` or `reachd wait
    /// --for`): `online` without a connectivity check, `dns` without a nameserver check, a
    /// `target:NAME` that names no target — an operator learns it better at start than from a
    /// pod that never turns ready or a wait that always times out.
    ///
    /// - Parameter source: the flag or variable the conditions came from, for the message.
    func refuseUnsatisfiable(_ conditions: [ReadinessCondition], source: String) throws {
        for condition in conditions {
            switch condition {
            case .online where connectivity == nil:
                throw ValidationError(
                    "\(source): online needs --connectivity-url (env: REACHD_CONNECTIVITY_URL): "
                        + "without a connectivity check it could never hold")
            case .uplinkOnline(let interface) where !TargetSpec.isValidInterfaceName(interface):
                throw ValidationError(
                    "\(source): \(condition): \"\(interface)\" is no interface name (1–15 bytes, no /, no whitespace)")
            case .uplinkOnline where !perUplink:
                throw ValidationError(
                    "\(source): \(condition) needs --per-uplink (env: REACHD_PER_UPLINK): "
                        + "without a check per uplink it could never hold")
            case .dns where dnsCheck == nil:
                throw ValidationError(
                    "\(source): dns needs --dns-check (env: REACHD_DNS_CHECK): "
                        + "without a nameserver check it could never hold")
            case .target(let name) where !targets.contains(where: { $0.name == name }):
                let configured =
                    targets.isEmpty
                    ? "no target is configured (--target, env: REACHD_TARGETS; --targets-file)"
                    : "the targets are " + targets.map(\.name).joined(separator: ", ")
                throw ValidationError("\(source): \(condition) names no configured target; \(configured)")
            default:
                break
            }
        }
    }
}
