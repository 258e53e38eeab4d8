import Glibc
import Reachable

/// Output without buffering, so the executable needs only FoundationEssentials (full Foundation
/// would map ICU and several megabytes more into every reachd process).
enum Output {
    /// Writes at once, unbuffered: a line per change reaches a pipe when it happens.
    static func write(_ text: String, to descriptor: Int32 = STDOUT_FILENO) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { raw in
                try? systemCall("write") { Glibc.write(descriptor, raw.baseAddress! + offset, raw.count - offset) }
            }
            guard let written, written > 0 else { return }
            offset += written
        }
    }
}
