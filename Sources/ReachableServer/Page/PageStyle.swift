extension Page {
    /// The page's one `<style>` element, allowed by its hash in the Content-Security-Policy
    /// (`Page.styleHash`): a change here needs the new hash, which `PageTests` prints.
    ///
    /// Dark, high-contrast, and big where it matters: the state is meant to be read from across
    /// a room. Colours follow one scale of tones (good, warn, bad, idle) used by every part.
    static let style = #"""
        :root{--bg:#0d1117;--card:#161b22;--line:#30363d;--text:#e6edf3;--muted:#8b949e;--good:#2ea043;--bad:#f85149;--warn:#d29922;--idle:#8b949e;color-scheme:dark}
        *{box-sizing:border-box}
        body{margin:0;background:var(--bg);color:var(--text);font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Ubuntu,sans-serif}
        header{padding:1rem clamp(1rem,4vw,2.5rem) 1.5rem;background:#484f58;color:#fff;transition:background .3s}
        header[data-tone=good]{background:#1a7f37}header[data-tone=bad]{background:#b62324}header[data-tone=warn]{background:#9a6700}
        .top{display:flex;justify-content:space-between;align-items:center;gap:1rem;font-weight:600}
        .brand{letter-spacing:.05em;opacity:.85}
        #stream{padding:.2rem .75rem;border-radius:999px;background:#0008;font-size:.9rem;white-space:nowrap}
        #stream::before{content:"";display:inline-block;width:.6rem;height:.6rem;margin-right:.45rem;border-radius:50%;background:var(--idle)}
        #stream[data-tone=good]::before{background:#3fb950}#stream[data-tone=warn]::before{background:var(--warn);animation:blink 1s infinite}#stream[data-tone=bad]::before{background:var(--bad)}
        @keyframes blink{50%{opacity:.2}}
        #state{font-size:clamp(2.6rem,12vw,9rem);font-weight:800;line-height:1.05;letter-spacing:-.02em;margin:.4rem 0 .2rem;overflow-wrap:anywhere}
        #summary{font-size:clamp(1rem,2.4vw,1.35rem);opacity:.92}
        body.stale main,body.stale #state{opacity:.55}
        main{padding:1.25rem clamp(1rem,4vw,2.5rem) 2rem;display:grid;grid-template-columns:1fr 1fr;gap:1rem;max-width:110rem}
        .flags{grid-column:1/-1;display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,10rem),1fr));gap:1rem}
        .flag,.card{background:var(--card);border:1px solid var(--line);border-radius:.75rem;padding:1rem 1.25rem}
        .flag b,h2{display:block;font-size:.8rem;font-weight:600;text-transform:uppercase;letter-spacing:.08em;color:var(--muted);margin:0 0 .35rem}
        .big{font-size:clamp(1.5rem,3.2vw,2.1rem);font-weight:700;margin-right:.4rem}
        .clip{white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
        .good{color:#3fb950}.bad{color:var(--bad)}.warn{color:var(--warn)}.idle{color:var(--idle)}
        .wide{grid-column:1/-1}
        #targets,#interfaces{max-height:36rem;overflow-y:auto}
        .row{padding:.6rem 0;border-top:1px solid var(--line)}.row:first-of-type{border-top:0;padding-top:0}
        .name{font-size:1.2rem;font-weight:700;margin-right:.5rem;overflow-wrap:anywhere}
        .badge{display:inline-block;padding:0 .55rem;margin:.1rem .3rem .1rem 0;border-radius:999px;border:1px solid currentColor;font-size:.85rem;font-weight:600}
        .detail{color:var(--muted);font-size:.9rem;overflow-wrap:anywhere}
        .mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;color:var(--text)}
        .empty{color:var(--muted);font-style:italic}
        .fam{display:inline-block;min-width:2.8em;font-size:.8rem;font-weight:600;color:var(--muted)}
        #changes{list-style:none;margin:0;padding:0;max-height:26rem;overflow-y:auto}
        #changes li{display:flex;gap:.75rem;align-items:baseline;padding:.35rem .6rem;border-left:4px solid var(--idle);margin-bottom:.3rem;background:#0d1117}
        #changes li[data-tone=good]{border-color:var(--good)}#changes li[data-tone=bad]{border-color:var(--bad)}#changes li[data-tone=warn]{border-color:var(--warn)}
        #changes time,#changes .seq{color:var(--muted);font-variant-numeric:tabular-nums;white-space:nowrap}
        footer{padding:0 clamp(1rem,4vw,2.5rem) 1.5rem;color:var(--muted);font-size:.85rem}
        #changes .seq{min-width:2.8em}
        @media (max-width:52rem){main{grid-template-columns:1fr}}
        .pair{grid-column:1/-1}@media (min-width:52rem){.pair{grid-column:span 2}}
        @media (max-width:40rem){#changes li{flex-wrap:wrap;gap:.2rem .6rem}}
        """#
}
