import CMicroHTTPD
import Glibc

/// libmicrohttpd's version, for the start-up log and `reachd_build_info`.
public enum MicroHTTPDVersion {
    /// libmicrohttpd's own version string (`0.9.75`).
    public static let libmicrohttpd: String = {
        guard let text = MHD_get_version() else { return "unknown" }
        let bytes = UnsafeRawBufferPointer(start: text, count: strlen(text))
        return String(decoding: bytes, as: UTF8.self)
    }()
}
