import FuzzSupport

@testable import ReachableServer

/// `--web-config-file`'s YAML through `WebConfig.parse` (libyaml underneath, `YAMLNode`), and a
/// `basic_auth_users` hash through `BcryptHash.isWellFormed`.
///
/// Input: the whole input is the file's text (invalid UTF-8 is decoded with replacements, as the
/// file is read).
enum WebConfigFuzz {
    static func run(_ input: inout FuzzInput) {
        let text = String(decoding: Array(input.rest()), as: UTF8.self)
        let config: WebConfig
        do {
            config = try WebConfig.parse(yaml: text, directory: "/etc/reachd")
        } catch {
            // A refusal says what it is about; a line, when given, is one of the file's.
            require(!error.message.isEmpty, "an empty refusal")
            if let line = error.line {
                let lines = yamlLines(text)
                require(line >= 1 && line <= lines + 1, "line \(line) of a \(lines)-line file")
            }
            return
        }
        // What is accepted is what reachd can use.
        for (name, hash) in config.users {
            require(!name.isEmpty && !name.contains(":"), "user \(name.debugDescription) accepted")
            require(BcryptHash.isWellFormed(hash), "hash of \(name) accepted: \(hash.debugDescription)")
        }
        if let tls = config.tls {
            require(tls.files.allSatisfy { $0.hasPrefix("/") }, "a relative path left: \(tls.files)")
            require(tls.clientAuth != .requireAndVerify || tls.clientCAFile != nil, "client auth without a CA")
        }
    }

    /// Lines as YAML counts them (and libyaml with it): a line ends at LF, CR, CR LF, NEL, LS or PS
    /// — a lone CR too, which the first version of this check missed.
    static func yamlLines(_ text: String) -> Int {
        var lines = 1
        var afterCR = false
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": if !afterCR { lines += 1 }
            case "\r", "\u{85}", "\u{2028}", "\u{2029}": lines += 1
            default: break
            }
            afterCR = scalar == "\r"
        }
        return lines
    }
}
