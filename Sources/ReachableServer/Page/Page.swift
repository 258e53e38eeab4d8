/// The live page at `/`: one self-contained HTML document (its style and script inline; no
/// external script, style, font or image), compiled into the binary and served as one shared
/// response.
///
/// The Content-Security-Policy allows exactly the page's own `<style>` and `<script>`, by their
/// SHA-256 hashes, and lets the script talk only to this origin (`/status`, `/events`). The
/// hashes are constants, not computed at start: the policy is a fixed string anyone can read
/// here, and `PageTests` recomputes both hashes from `style` and `script` and fails (printing
/// the new values) when either text changed without them. Hashes rather than a nonce: a nonce
/// must be new on every response, and this response is made once. Hashes rather than `'self'`
/// with separate files: the page stays one request and one route.
enum Page {
    static let styleHash = "sha256-ul55BXMZIUVriSskiChlA8EYqtSuI/wjNod4z1LZhRw="
    static let scriptHash = "sha256-0gwNc04gI/woUd0jA7s7oyl9qkDeiFkk0yX2Ooc9b1I="

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

    /// The markup around the style and the script. Every element the script fills has an id;
    /// `#state` holds the document's `state` as its only text.
    static let html = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="color-scheme" content="dark">
        <title>reachd</title>
        <link rel="icon" id="icon" href="data:,">
        <style>\(style)</style>
        </head>
        <body class="stale">
        <header id="banner" data-tone="idle">
        <div class="top"><span class="brand">reachd</span><span id="stream" data-tone="idle">connecting…</span></div>
        <div id="state">unknown</div>
        <div id="summary">waiting for the first reading</div>
        </header>
        <main>
        <section class="flags" aria-label="Families, transport, cost, connectivity and DNS">
        <div class="flag" id="ipv4"><b>IPv4</b><span class="big idle">–</span></div>
        <div class="flag" id="ipv6"><b>IPv6</b><span class="big idle">–</span></div>
        <div class="flag" id="transport"><b>Transport</b><span class="big idle">–</span></div>
        <div class="flag" id="metered"><b>Metered</b><span class="big idle">–</span></div>
        <div class="flag pair"><b>Connectivity</b><div id="connectivity"><span class="big idle">–</span></div></div>
        <div class="flag pair"><b>DNS</b><div id="dns"><span class="big idle">–</span></div></div>
        </section>
        <section class="card"><h2>Targets</h2><div id="targets"></div></section>
        <section class="card"><h2>Interfaces</h2><div id="interfaces"></div></section>
        <section class="card wide"><h2>Changes since this page was opened</h2><ol id="changes"></ol></section>
        </main>
        <footer id="footer"></footer>
        <noscript>This page needs JavaScript; the same document is at <a href="status">/status</a>.</noscript>
        <script>\(script)</script>
        </body>
        </html>

        """

    /// The response to `GET /` and `HEAD /`, made on first use and shared by every request.
    static let response = SharedResponse(headers: headers, body: Array(html.utf8))
}
