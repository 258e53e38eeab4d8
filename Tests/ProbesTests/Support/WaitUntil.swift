/// Waits until `condition` holds: for an event a test cannot be called back on (an engine counter,
/// what a test server received), with a deadline that only a broken test reaches.
func waitUntil(_ description: String, timeout: Duration = .seconds(30), _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { throw WaitTimedOut(description: description, timeout: timeout) }
        try await Task.sleep(for: .milliseconds(2))
    }
}

struct WaitTimedOut: Error, CustomStringConvertible {
    let description: String

    init(description: String, timeout: Duration) {
        self.description = "timed out after \(timeout) waiting until \(description)"
    }
}
