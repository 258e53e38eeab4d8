import CLibFuzzer
import Glibc

/// libFuzzer's `LLVMFuzzerTestOneInput`, as a fuzz target defines it with `@_cdecl`.
public typealias TestOneInput = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

/// Hands the process to libFuzzer: it parses its own options (`-runs=`, `-max_total_time=`, corpus
/// folders) and calls `testOneInput` for every input. Call it from the target's main.swift.
public func runFuzzer(_ testOneInput: TestOneInput) -> Never {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, testOneInput))
}

/// An invariant of the code under test. A violation aborts, so libFuzzer saves the input as a
/// crash like any other: a wrong answer counts as much as a trap.
public func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    guard !condition() else { return }
    let line = Array("invariant violated: \(message())\n".utf8)
    _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    abort()
}
