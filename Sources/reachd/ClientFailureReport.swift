import ArgumentParser
import ReachdClient

extension LocalHTTPClient.Failure {
    /// Says why on stderr, once and without the usage text (that is for usage mistakes), and
    /// gives the exit that ends the command: 1, or 77 for refused credentials.
    func reported() -> ExitCode {
        Output.write("Error: \(description)\n", to: 2)
        return ExitCode(exitStatus)
    }
}
