import CGnuTLS
import FoundationEssentials

/// The live page at `/`: one self-contained HTML document (its style and script inline; no
/// external script, style, font or image), compiled into the binary and served as one shared
/// response.
///
/// Its parts are ordinary files beside this one — `page.html` (the markup, with an empty
/// `<style>` and `<script>`), `page.css`, `page.js` — embedded at build time (SwiftPM's
/// `embedInCode`) and put together on first use, so the page stays one request and one route.
///
/// - `page.css`: dark, high-contrast, and big where it matters (the state is meant to be read
///   from across a room); one scale of tones (good, warn, bad, idle) for every part.
/// - `page.js`: reads `/status` and `/changes` (a 404 from an older reachd: the record starts
///   then), then follows `/events`; every document is drawn whole (status is state, not a log).
///   After each event it reads `/changes` again for the changes it has not seen: the list shows
///   their `lines` (worded by the server, `ChangeText`) and the last hour's strips
///   (`data-timeline`) walk back through their diffs' `state` fields; the page computes no diff
///   and words nothing. The banner's `data-level` and `#problems` say what is failing. A stream
///   error re-reads `/status`.
///   Interface names, URLs and reasons come from the network and the command line: they reach
///   the page only through `textContent`, never as markup (the policy's Trusted Types
///   directives make the browser refuse any HTML sink, should one ever be added).
///
/// The Content-Security-Policy allows exactly the page's own `<style>` and `<script>`, by their
/// SHA-256 hashes, computed here from the embedded text (a change of either needs nothing
/// else), and lets the script talk only to this origin (`/status`, `/changes`, `/events`). Hashes rather
/// than a nonce: a nonce must be new on every response, and this response is made once.
enum Page {
    static let style = String(decoding: PackageResources.page_css, as: UTF8.self)
    static let script = String(decoding: PackageResources.page_js, as: UTF8.self)
    static let styleHash = cspHash(style)
    static let scriptHash = cspHash(script)

    /// `require-trusted-types-for 'script'` makes Chromium refuse any string assigned to an HTML
    /// sink such as `innerHTML` (the page uses none: all text goes through `textContent`);
    /// browsers without Trusted Types ignore it. `img-src data:` is the favicon, drawn by the
    /// script in the state's colour.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src '\(scriptHash)'; style-src '\(styleHash)'; connect-src 'self'; "
        + "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; "
        + "require-trusted-types-for 'script'; trusted-types 'none'"

    /// `no-cache`: a browser may keep the page but asks again (a new reachd may bring a new page).
    static let headers = [
        HTTPField("Content-Type", "text/html; charset=utf-8"),
        HTTPField("Content-Security-Policy", contentSecurityPolicy),
        HTTPField("Cache-Control", "no-cache"),
        HTTPField("X-Content-Type-Options", "nosniff"),
        HTTPField("Referrer-Policy", "no-referrer"),
    ]

    /// The markup with the style and the script in place. Every element the script fills has an
    /// id; `#state` holds the document's `state` as its only text.
    static let html = String(decoding: PackageResources.page_html, as: UTF8.self)
        .replacing("<style></style>", with: "<style>\(style)</style>")
        .replacing("<script></script>", with: "<script>\(script)</script>")

    /// The response to `GET /` and `HEAD /`, made on first use and shared by every request.
    static let response = SharedResponse(headers: headers, body: Array(html.utf8))

    /// A CSP source expression for an inline element's exact text (SHA-256 by GnuTLS, which
    /// reachd links for HTTPS anyway).
    static func cspHash(_ text: String) -> String {
        var bytes = Array(text.utf8)
        var digest = [UInt8](repeating: 0, count: 32)
        let hashed = gnutls_hash_fast(GNUTLS_DIG_SHA256, &bytes, bytes.count, &digest)
        precondition(hashed == 0, "GnuTLS could not hash the page (\(hashed))")
        return "sha256-" + Data(digest).base64EncodedString()
    }
}
