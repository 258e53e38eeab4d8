import CSignalFD  // sys/signalfd.h, which Glibc's module map leaves out
import Glibc
import Reachable

/// A `signalfd`: the given signals, taken one at a time as data by the thread that reads it —
/// those pending for the whole process and those sent to that thread. They must be blocked in
/// every thread that could otherwise take them (`ProcessSignals`): a blocked signal stays pending
/// until it is read, where a handler could run on any thread and a standard signal sent again
/// before it ran was merged into the one already pending.
struct SignalReader: ~Copyable {
    private let descriptor: OwnedDescriptor

    init(_ signals: [Int32]) throws(SystemError) {
        var set = sigset_t(containing: signals)
        descriptor = OwnedDescriptor(taking: try systemCall("signalfd") { signalfd(-1, &set, Int32(SFD_CLOEXEC)) })
    }

    /// Sleeps until one of the signals is pending, and takes it.
    func next() throws(SystemError) -> Int32 {
        var info = signalfd_siginfo()
        let size = MemoryLayout<signalfd_siginfo>.size
        // The kernel hands over whole records only: a read either fails or returns one.
        _ = try systemCall("read signalfd") { read(descriptor.rawValue, &info, size) }
        return Int32(info.ssi_signo)
    }
}

extension sigset_t {
    /// The set as `signalfd` and `pthread_sigmask` take it.
    init(containing signals: [Int32]) {
        self.init()
        sigemptyset(&self)
        for signal in signals { sigaddset(&self, signal) }
    }
}
