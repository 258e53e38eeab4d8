public import FoundationEssentials
import Reachable

/// Reads `--targets-file` again on SIGHUP and whenever it changes, and applies it in place
/// (`TargetProber.replaceTargets`) — or, when it does not parse or drops a target `--ready-when`
/// needs, keeps the previous set. Every outcome is reported (logs and `/metrics`).
///
/// Unchecked `Sendable`: its state is confined to the probe engine's thread; every entry point
/// hops onto it with `engine.perform`.
final class TargetsReloader: @unchecked Sendable {
    private let file: TargetsFile
    private let prober: TargetProber
    private let engine: ProbeEngine
    private let report: @Sendable (TargetsReload) -> Void
    /// What the last read found (the bytes, or why none): a file event that finds the same again
    /// changes nothing and says nothing — kubelet's swap, an editor's rename and its close each
    /// make an event for one change.
    private var lastRead: Result<[UInt8], TargetsFileError>?

    init(
        file: TargetsFile, prober: TargetProber, engine: ProbeEngine,
        report: @escaping @Sendable (TargetsReload) -> Void
    ) {
        self.file = file
        self.prober = prober
        self.engine = engine
        self.report = report
    }

    /// Watches the file, and reads it once: what it says now is what counts (it may have changed
    /// since the command line read it); unchanged, that read is silent.
    func start() {
        engine.watch(path: file.path, completedWritesOnly: true) { [self] in reload(.fileChanged) }
        engine.perform { [self] in reload(nil) }
    }

    /// SIGHUP: read and apply, even when the file is as it was (the reload is reported).
    func reloadNow() {
        engine.perform { [self] in reload(.signal) }
    }

    /// On the engine thread. `cause` `nil`: the read at start, reported only when it changes the set.
    private func reload(_ cause: TargetsReload.Cause?) {
        let read = Result { () throws(TargetsFileError) in try file.contents() }
        let same = read == lastRead
        lastRead = read
        if cause == .fileChanged, same { return }
        let now = Date()
        let outcome = read.flatMap { bytes in
            Result { () throws(TargetsFileError) in try file.targets(in: bytes) }
        }.map { specs in
            // Applied in the document that applies the targets. A read that changes nothing
            // (SIGHUP on the same file) keeps the time: no new document for it — unless it
            // clears an error.
            prober.replaceTargets(with: specs) { document, setChanged in
                guard setChanged || document.targetsFile?.error != nil else { return }
                document.targetsFile?.error = nil
                document.targetsFile?.appliedAt = now
            }
        }
        if case .failure(let error) = outcome {
            prober.monitor.update { $0.targetsFile?.error = error.summary }
        }
        if cause == nil, case .success(let change) = outcome, change.isNone { return }
        report(TargetsReload(cause: cause ?? .fileChanged, path: file.path, outcome: outcome, at: now))
    }
}

/// One reading of `--targets-file` after start: applied (what changed), or not applied (why).
public struct TargetsReload: Sendable {
    public enum Cause: String, Sendable {
        /// SIGHUP.
        case signal
        /// The file (or a symlink its path goes through) changed.
        case fileChanged = "file-changed"
    }

    public var cause: Cause
    public var path: String
    /// `failure`: not applied; the previous targets stay.
    public var outcome: Result<TargetSetChange, TargetsFileError>
    public var at: Date
}

extension TargetSetChange {
    /// Nothing added, removed or changed.
    var isNone: Bool { added.isEmpty && removed.isEmpty && changed.isEmpty }
}
