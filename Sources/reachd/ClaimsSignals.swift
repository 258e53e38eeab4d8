/// A command that answers SIGTERM, SIGINT and SIGHUP itself: serving and `reachd wait` take them
/// with `ProcessSignals.claim()` before anything else. For every other command `main.swift`
/// leaves each signal its default action once the command line is read.
protocol ClaimsSignals {}
