"""page: the HTML page: head, units (of what is drawn), the warning banner of a comparison
across fabrics, the context table, a section per binary with its plots and values, and the
self-check the browser test reads (#fr-check)."""

import datetime

from .accept_html import ACCEPT_CSS
from .comparison import _NOT_COMPARED, mismatch_text
from .fmt import ctx_text, esc
from .names import PROG

CTX_ROWS = (
    ("device", "device"), ("peer_device", "peer device"), ("port", "port"), ("link_layer", "link layer"),
    ("port_rate_Gbps", "link rate (Gb/s)"), ("active_speed", "active speed"), ("active_width", "active width"),
    ("active_mtu", "active MTU (bytes)"), ("gid_type", "GID type"), ("gid_index", "GID index"), ("gid", "GID"),
    ("mode", "mode"), ("host", "host"), ("peer_host", "peer host"), ("hosts", "hosts (by rank)"),
    ("ranks", "ranks"), ("launcher", "launcher"), ("kernel", "kernel"), ("rdma_core", "rdma-core"),
    ("fabench_version", "fabench"), ("peer_fabench_version", "peer fabench"), ("fw_ver", "firmware"),
    ("peer_fw_ver", "peer firmware"), ("date", "date"), ("command_line", "command line"),
    ("executable", "executable"), ("library_build_type", "build type"), ("num_cpus", "CPUs"),
    ("mhz_per_cpu", "MHz per CPU"), ("numa_node", "NUMA node"), ("node_guid", "node GUID"),
)
_CTX_HIDDEN = {"caches", "latency_unit", "bandwidth_unit"}

CSS = """
body{font-family:"DejaVu Sans",Verdana,Arial,sans-serif;margin:1.2em 2em;color:#222;font-size:14px}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.2em;margin-top:1.6em;border-bottom:2px solid #ddd}
table{border-collapse:collapse;font-size:12px;margin:.5em 0}
td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#f3f3f3}tr.diff td{background:#fff4c2}
.units,.notes{background:#f5f8ff;border-left:4px solid #4a7bd0;padding:.4em .8em;margin:.6em 0}
.failed{background:#fff0f0;border-left:4px solid #d62728;padding:.4em .8em;margin:.6em 0}
.failed h3{color:#b00;margin:.2em 0;font-size:1em}
.plots{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:12px}
.scroll{overflow-x:auto}
figure.fr-plot{margin:0;border:1px solid #e4e4e4;padding:4px;background:#fff}
figure.fr-plot svg{width:100%;max-width:820px;height:auto;display:block}
figure.fr-plot figcaption{font-size:11px;color:#666}
.fr-pt:hover{opacity:.6}
details{margin:.6em 0}summary{cursor:pointer}
code{background:#f2f2f2;padding:0 3px}
#fr-check{display:none}
.banner{background:#fff3cd;border:2px solid #d39e00;border-left-width:8px;padding:.5em .9em;margin:.8em 0}
.banner b{color:#8a5a00}
"""

HEAD_JS = """
window.__frErrors=[];
window.addEventListener('error',function(e){var t=e.target;
 window.__frErrors.push(String(e.message||(t&&(t.src||t.href))||'error'));},true);
(function(){var ce=console.error;console.error=function(){
 window.__frErrors.push(Array.prototype.join.call(arguments,' '));return ce.apply(console,arguments);};})();
"""

# Counts what the page shows, for people (the caption under each plot) and for
# test/report's headless-Chromium test (the JSON in #fr-check).
CHECK_JS = """
(function(){
 function check(){
  var plots=[];
  document.querySelectorAll('figure.fr-plot').forEach(function(f){
   var id=f.getAttribute('data-plot');
   var lab=function(s){var e=f.querySelector('[id="'+id+'-'+s+'"]');return e?e.textContent.trim():'';};
   var pts=f.querySelectorAll('.fr-pt');var tipped=0;var ticks=[];var yticks=[];
   pts.forEach(function(p){if(p.querySelector('title'))tipped++;});
   f.querySelectorAll('[id^="'+id+'-xtick_"] text').forEach(function(t){ticks.push(t.textContent.trim());});
   f.querySelectorAll('[id^="'+id+'-ytick_"] text').forEach(function(t){
    var s=t.textContent.trim();if(s)yticks.push(s);});
   plots.push({id:id,svg:!!f.querySelector('svg'),points:pts.length,tooltips:tipped,
    failed:f.querySelectorAll('.fr-failed').length,expected:+f.getAttribute('data-points'),
    lines:f.querySelectorAll('.fr-line').length,title:lab('title'),x_label:lab('xlabel'),y_label:lab('ylabel'),
    xticks:ticks,yticks:yticks});
  });
  var mats=[];
  document.querySelectorAll('figure.accept-matrix').forEach(function(f){
   var im=f.querySelector('svg image');
   mats.push({id:f.getAttribute('data-matrix'),n:+f.getAttribute('data-n'),render:f.getAttribute('data-render'),
    culprits:f.getAttribute('data-culprits'),cells:f.querySelectorAll('td.fr-cell').length,
    marks:f.querySelectorAll('[data-culprit]').length,
    image:im?(sizes[f.getAttribute('data-matrix')]||'not decoded'):null});
  });
  var res=[];
  try{res=performance.getEntriesByType('resource').map(function(e){return e.name;});}catch(e){}
  var banners=[];
  document.querySelectorAll('.banner').forEach(function(b){
   banners.push({id:b.id,fields:b.getAttribute('data-fields'),visible:b.offsetHeight>0,
    text:b.textContent.trim().slice(0,300)});});
  var out={plots:plots,matrices:mats,banners:banners,errors:window.__frErrors.slice(),resources:res,ready:document.readyState};
  document.getElementById('fr-check').textContent=JSON.stringify(out);
 }
 // An acceptance heatmap is one PNG (a pixel per cell): record the size it decodes to.
 var sizes={};
 function decode(){
  document.querySelectorAll('figure.accept-matrix').forEach(function(f){
   var e=f.querySelector('svg image'),k=f.getAttribute('data-matrix');
   if(!e)return;
   var im=new Image();
   im.onload=function(){sizes[k]=[im.naturalWidth,im.naturalHeight];check();};
   im.onerror=function(){sizes[k]='error';check();};
   im.setAttribute('src',e.getAttribute('xlink:href')||e.getAttribute('href'));
  });
 }
 check();window.addEventListener('load',function(){check();decode();});
})();
"""


_CTX_MAIN = {"device", "peer_device", "link_layer", "port_rate_Gbps", "active_speed", "active_width", "active_mtu",
             "gid_type", "gid_index", "mode", "host", "peer_host", "hosts", "ranks", "launcher", "kernel",
             "rdma_core", "fabench_version", "date", "command_line", "executable"}


def context_table(report):
    """The run's context: the main fields in a table, the rest folded below it.
    A row is highlighted where runs of the same binary differ."""
    cols = list(report.files)
    keys, seen = [], set()
    for k, label in CTX_ROWS:
        if any(k in f.context for f in cols):
            keys.append((k, label))
            seen.add(k)
    for f in cols:
        for k in f.context:
            if k not in seen and k not in _CTX_HIDDEN:
                keys.append((k, k))
                seen.add(k)
    head = "<tr><th>field</th>" + "".join(
        f"<th>{esc(f.binary)}<br>{esc(f.run.label)}: {esc(f.name)}</th>" for f in cols) + "</tr>"

    def rows(which):
        out = []
        for k, label in which:
            vals = [ctx_text(f.context[k]) if k in f.context else "" for f in cols]
            differs = any(len(runs) > 1 and k not in _NOT_COMPARED and
                          len({ctx_text(r.context.get(k, "")) for r in runs}) > 1
                          for runs in report.kinds.values())
            cls = " class='diff'" if differs else ""
            out.append(f"<tr{cls}><th>{esc(label)}</th>" + "".join(f"<td>{esc(v)}</td>" for v in vals) + "</tr>")
        return "".join(out)

    main = [kl for kl in keys if kl[0] in _CTX_MAIN]
    rest = [kl for kl in keys if kl[0] not in _CTX_MAIN]
    html_ = f"<div class='scroll'><table class='context'>{head}{rows(main)}</table></div>"
    if rest:
        html_ += (f"<details><summary>More context ({len(rest)} fields)</summary><div class='scroll'>"
                  f"<table class='context'>{head}{rows(rest)}</table></div></details>")
    return html_


def section_html(sec, svgs):
    o = [f"<section id='sec-{esc(sec.id)}' class='fr-section' data-kind='{esc(sec.kind)}'>",
         f"<h2>{esc(sec.title)}</h2>"]
    for n in sec.notes:
        o.append(f"<p class='note'>{esc(n)}</p>")
    for lbl, diffs in sec.mismatch:
        if diffs:
            o.append(f"<div class='banner' id='fr-mismatch-{esc(sec.id)}-{esc(lbl.replace(' ', ''))}' role='alert' "
                     f"data-fields='{esc(','.join(dict.fromkeys(w for w, _, _, _ in diffs)))}'><b>Different "
                     f"fabrics:</b> {esc(lbl)} differs from {esc(sec.runs[0].label)} in {esc(mismatch_text(diffs))}. "
                     "Its ratios compare the fabrics as much as the runs.</div>")
    for lbl, diffs in sec.differs:
        o.append(f"<div class='notes'><b>Context fields that differ, {esc(lbl)} against {esc(sec.runs[0].label)}"
                 f"</b> ({len(diffs)}): {esc(', '.join(k for k, _, _ in diffs) or 'none')}")
        if diffs:
            o.append(f"<table><tr><th>field</th><th>{esc(sec.runs[0].label)}</th><th>{esc(lbl)}</th></tr>")
            for k, a, b in diffs:
                o.append(f"<tr><th>{esc(k)}</th><td>{esc(a)}</td><td>{esc(b)}</td></tr>")
            o.append("</table>")
        o.append("</div>")
    if sec.failed:
        o.append(f"<div class='failed'><h3>{len(sec.failed)} failed benchmark(s)</h3><ul>")
        for r, n, e in sec.failed:
            o.append(f"<li>{esc(r)}: <code>{esc(n)}</code>: {esc(e)}</li>")
        o.append("</ul></div>")
    o.append("<div class='plots'>")
    for p in sec.plots:
        failed = sum(len(s.points) for s in p.series if s.kind == "failed")
        o.append(f"<figure class='fr-plot' id='plot-{esc(p.id)}' data-plot='{esc(p.id)}' "
                 f"data-points='{p.n_points}' data-series='{len(p.series)}'>{svgs[p.id]}"
                 f"<figcaption>{esc(p.id)}: {len(p.series)} series, {p.n_points} points"
                 f"{f', {failed} failed' if failed else ''}; hover a point for its values</figcaption></figure>")
    o.append("</div>")
    if sec.table:
        cols, rows = sec.table
        o.append(f"<details><summary>All values ({len(rows)} benchmarks)</summary><table><tr>" +
                 "".join(f"<th>{esc(c)}</th>" for c in cols) + "</tr>")
        for row in rows:
            cls = " class='diff'" if row[2] != "ok" else ""
            o.append(f"<tr{cls}>" + "".join(f"<td>{esc(v)}</td>" for v in row) + "</tr>")
        o.append("</table></details>")
    o.append("</section>")
    return "\n".join(o)


def page(report, svgs, accept_parts=()):
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    names = ", ".join([f.name for f in report.files] + [s.file.name for s in report.accept])
    parts = [
        "<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>fabench report: {esc(names)}</title>", f"<style>{CSS}{ACCEPT_CSS if report.accept else ''}</style>",
        f"<script>{HEAD_JS}</script>", "</head><body>",
        "<h1>fabench report</h1>",
        f"<p>{esc(names)}; written {esc(now)} by {PROG}. Self-contained: this page fetches nothing.</p>",
    ]
    parts.extend(mismatch_banner(report))
    parts.append(units_box(report))
    if report.notes:
        parts.append("<div class='notes'>" + "".join(f"<p>{esc(n)}</p>" for n in report.notes) + "</div>")
    if report.files:
        parts.append("<h2>Context</h2>")
        parts.append(context_table(report))
    for sec in report.sections:
        parts.append(section_html(sec, svgs))
    parts.extend(accept_parts)
    parts.append("<pre id='fr-check'></pre>")
    parts.append(f"<script>{CHECK_JS}</script>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


UNIT_TEXT = (
    ("Gb/s", "Gb/s = 10<sup>9</sup> bit/s"), ("GB/s", "GB/s = 10<sup>9</sup> bytes/s"),
    ("M msg/s", "M msg/s = 10<sup>6</sup> messages/s"), ("M WR/s", "M WR/s = 10<sup>6</sup> work requests/s"),
    ("µs", "µs = 10<sup>-6</sup> s"),
)


def units_box(report):
    """The units and marks of this page only: what its plots and matrices draw."""
    plots = report.plots
    text = " ".join([p.y_label for p in plots] + [p.title for p in plots])
    if report.accept:
        text += " Gb/s µs"
    units = [t for u, t in UNIT_TEXT if u in text]
    out = []
    if units:
        g = [x for x, k in (("G = 10<sup>9</sup>", "G"), ("M = 10<sup>6</sup>", "M")) if any(k in u for u in units)]
        out.append((" and ".join(g) + ": " if g else "") + ", ".join(units) + ".")
    if any(p.x_scale == "log2" for p in plots):
        out.append("Sizes are bytes; size ticks use KiB = 1024 B and MiB = 1024<sup>2</sup> B (as fabench's "
                   "<code>-s 4K</code>).")
    if any(s.kind == "lat" for s in report.sections):
        out.append("Latency: write/send one-way = RTT/2, read/atomic full RTT; where percentiles meet, the "
                   "higher ones are the larger marks beneath (max a ring).")
    lines = [n for p in plots for n, _, _ in p.lines]
    kinds = [what for what, has in (
        ("the port's link rate (ceiling)", any(n.startswith("link rate") for n in lines)),
        ("100 %", any("100 %" in n for n in lines)),
        ("ratio 1", any(n.startswith("equal to") for n in lines))) if has]
    if kinds:
        out.append(f"Dashed horizontal lines: {', '.join(kinds)}.")
    if any(p.vlines for p in plots):
        out.append("Dotted vertical lines: where a sweep reaches 90 % of its best.")
    if any(s.kind == "bar" and s.run > 1 for p in plots for s in p.series):
        out.append("Bars of later runs are hatched.")
    if any(s.kind == "failed" for p in plots for s in p.series):
        out.append("Red ×: a failed benchmark (no value).")
    if not out:
        return ""
    return "<div class='units'><b>Units.</b> " + " ".join(out) + "</div>"


def mismatch_banner(report):
    """The page-top warning: runs compared across different devices, link rates, transports or
    hosts (each comparison section repeats its own)."""
    found = report.mismatches()
    if not found:
        return []
    fields = list(dict.fromkeys(w for *_, diffs in found for w, _, _, _ in diffs))
    items = "".join(f"<li>{esc(sec.title)}: {esc(label)} ({esc(' + '.join(f.name for f in files))}) against "
                    f"{esc(first.label)} ({esc(' + '.join(f.name for f in first.files))}): "
                    f"{esc(mismatch_text(diffs))}</li>" for sec, label, files, first, diffs in found)
    return [f"<div class='banner' id='fr-mismatch' role='alert' data-fields='{esc(','.join(fields))}'>"
            f"<b>Warning: the compared runs differ in {esc(', '.join(fields))}.</b> Their ratios compare "
            f"different fabrics, not only runs.<ul>{items}</ul></div>"]
