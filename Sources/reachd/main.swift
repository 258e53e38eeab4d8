import ArgumentParser
import Glibc
import ReachdApp

// The first line, while this is still the only thread: SIGTERM, SIGINT and SIGHUP are blocked
// here, and every thread made later (libdispatch's, libmicrohttpd's, reachd's own) inherits the
// mask, so none can take one with a handler and lose it; each stays pending until the signalfd
// is read (`ProcessSignals`). A thread made before this line would not block them.
do {
    let signals = try ProcessSignals()
    Task.detached {
        await parseAndRun()
        exit(EXIT_SUCCESS)
    }
    // This thread reads the signals for the process's life. Not Swift's async main: it parks the
    // main thread in libdispatch's `dispatch_main`, whose `sigsuspend` unblocks every signal there
    // — SIGTERM would take its default action on it, ending the process without a graceful shutdown.
    signals.readForever()
} catch {
    Output.write("reachd: cannot read signals: \(error)\n", to: STDERR_FILENO)
    exit(1)
}

/// ArgumentParser's `main()`, and between reading the command line and running the command, who
/// answers the signals held meanwhile: the command itself (`ClaimsSignals`), or their default
/// actions.
func parseAndRun() async {
    do {
        var command = try await Reachd.asyncParseAsRoot()
        if !(command is any ClaimsSignals) { ProcessSignals.leaveToDefaultActions() }
        if var asynchronous = command as? any AsyncParsableCommand {
            try await asynchronous.run()
        } else {
            try command.run()
        }
    } catch {
        Reachd.exit(withError: error)
    }
}
