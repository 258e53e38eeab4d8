import CCrypt

/// A new bcrypt hash for `basic_auth_users` (`reachd hash-password`), made by libxcrypt as
/// `BcryptHash` verifies it: `$2y$` (what `htpasswd -B` writes), with a salt from the system's
/// random source.
package enum BcryptHashMaking {
    /// What `--cost` takes: 10, the exporter-toolkit's examples' and `htpasswd -B`'s, costs
    /// about 50 ms a verification; every step up doubles it, and each failed guess at reachd
    /// pays it (docs/tls-and-auth.md).
    package static let costs = 10...14
    package static let defaultCost = 10

    /// The hash of `password` (checked by `NewPassword.refusal` first) at `cost`; `nil` if
    /// libxcrypt refuses.
    package static func hash(_ password: [UInt8], cost: Int) -> String? {
        var output = [CChar](repeating: 0, count: Int(CRYPT_GENSALT_OUTPUT_SIZE))
        // No random bytes given: libxcrypt takes them from getrandom(2).
        let setting = output.withUnsafeMutableBufferPointer { buffer in
            crypt_gensalt_rn("$2y$", UInt(cost), nil, 0, buffer.baseAddress, Int32(buffer.count)).map {
                String(cString: $0)
            }
        }
        guard let setting, let hash = BcryptHash.compute(password, setting: setting) else { return nil }
        return String(decoding: hash, as: UTF8.self)
    }
}
