"""accept_html: a fabench-accept section as HTML: the verdict, the culprits, the failed and
flaky pairs, the five matrices (an HTML table of cells up to --accept-table-max nodes, else an
image from accept_image) with their legends, and the tables of values."""

from .accept import ACCEPT_COLORS, ACCEPT_NOVALUE, ACCEPT_TABLE_MAX_N, ACCEPT_VERDICT_TEXT, ACCEPT_VERDICTS, \
    Matrix, _is_value, node_name, pair_name
from .accept_image import AcceptPainter, _dark, _hex, accept_image_svg
from .fmt import ctx_text, esc, fmt_num


def accept_cell_tip(f, m, p, a, b, v):
    at = p.last
    arrow = "→" if m.directed else "↔"
    head = f"{node_name(f, a)} {arrow} {node_name(f, b)}"
    if m.getter is None:
        text = f"{head}: {ACCEPT_VERDICT_TEXT[p.category]}"
    elif v is not None:
        text = f"{head}: {m.what} {fmt_num(v)} {m.unit}"
        lanes = (at.lanes_ab if (a, b) == (p.a, p.b) else at.lanes_ba) if m.id.endswith("-bw") else None
        if lanes:
            text += f" (per QP: {', '.join(fmt_num(x) for x in lanes)} Gb/s)"
        text += f"; pair {ACCEPT_VERDICT_TEXT[p.category]}"
    else:
        text = f"{head}: {ACCEPT_NOVALUE[Matrix.kind(p, v)][1]}; pair {ACCEPT_VERDICT_TEXT[p.category]}"
    if len(p.attempts) > 1:
        text += f"; attempt {len(p.attempts)} of {len(p.attempts)} counts"
    reasons = [] if p.category == "pass" else ([f"{at.status}: {at.reason}"] if at.status != "ok" else [])
    reasons += [str(x.get("text", "")) for x in (at.violations or []) if isinstance(x, dict)]
    if reasons:
        text += "\n" + "\n".join(dict.fromkeys(reasons))
    return text


def culprit_marks(f):
    """{node: [culprit index]} and {(a, b): culprit index} (both cells of a link)."""
    nodes, links = {}, {}
    for i, c in enumerate(f.culprits):
        if c["kind"] == "node":
            nodes.setdefault(c["nodes"][0], []).append(i)
        else:
            a, b = c["nodes"]
            links[(a, b)] = links[(b, a)] = i
    return nodes, links


def accept_table(sec, m, painter):
    f = sec.file
    n = f.n
    grid = [[None] * n for _ in range(n)]
    for a, b, p, v in m.cells(f):
        grid[a][b] = (p, v)
    cnodes, clinks = culprit_marks(f)
    show_text = n <= 16
    o = [f"<div class='scroll'><table class='accept-cells{'' if show_text else ' small'}'>"]
    corner = "sender ↓ receiver →" if m.directed else "node ↓ node →"
    o.append(f"<tr><th class='corner'>{corner}</th>")
    for b in range(n):
        cul = " class='cul-col' data-culprit='node'" if b in cnodes else ""
        o.append(f"<th data-node='{b}'{cul} title='{esc(node_name(f, b))}'>{b}</th>")
    o.append("</tr>")
    for a in range(n):
        cul = " class='cul-row' data-culprit='node'" if a in cnodes else ""
        o.append(f"<tr><th data-node='{a}'{cul} title='{esc(node_name(f, a))}'>{esc(node_name(f, a))}</th>")
        for b in range(n):
            cell = grid[a][b]
            marks, cls = [], ["fr-cell"]
            if a in cnodes or b in cnodes:
                marks.append("node")
                cls += (["cul-row"] if a in cnodes else []) + (["cul-col"] if b in cnodes else [])
            if (a, b) in clinks:
                marks.append("link")
                cls.append("cul-link")
            attrs = f" data-a='{a}' data-b='{b}'"
            if marks:
                attrs += f" data-culprit='{' '.join(marks)}'"
            if cell is None:
                bg, kind = painter.to_rgba(ACCEPT_COLORS["unmeasured"]), "unmeasured"
                tip = f"{node_name(f, a)}, {node_name(f, b)}: " + ("the node itself" if a == b else "not measured")
                attrs += " data-verdict='unmeasured' data-status='none'"
                label = ""
            else:
                p, v = cell
                bg, kind = painter.cell(p, v)
                tip = accept_cell_tip(f, m, p, a, b, v)
                attrs += f" data-verdict='{p.category}' data-status='{esc(p.last.status)}'"
                if v is not None:
                    attrs += f" data-value='{fmt_num(v)}'"
                    label = fmt_num(v) if abs(v) < 1000 else f"{v:.0f}"
                elif m.getter is None:
                    label = p.category
                else:
                    label = {"failed": "failed", "timeout": "timeout"}.get(kind, "–")
                if kind in ("failed", "timeout", "fail") or p.category in ("fail", "timeout"):
                    cls.append("fr-failed")
            fg = "#fff" if _dark(bg) else "#000"
            text = esc(label) if show_text else ""
            o.append(f"<td class='{' '.join(cls)}'{attrs} style='background:{_hex(bg)};color:{fg}' "
                     f"title='{esc(tip)}'>{text}</td>")
        o.append("</tr>")
    o.append("</table></div>")
    return "".join(o)


def accept_legend(m, painter):
    if m.getter is None:
        items = [(ACCEPT_COLORS[k], f"{ACCEPT_VERDICT_TEXT[k]} ({m.kinds.get(k, 0)})") for k in ACCEPT_VERDICTS]
        scale = ""
    else:
        items = [(c, f"{t} ({m.kinds.get(k, 0)})") for k, (c, t) in ACCEPT_NOVALUE.items()]
        worse = "lower" if m.lower_is_worse else "higher"
        top = "" if m.lower_is_worse else " (2 × median; above: darkest)"
        scale = (f"<span class='scale'>{fmt_num(m.range[0])} <span class='bar' style='background:"
                 f"{painter.gradient()}'></span> {fmt_num(m.range[1])} {esc(m.unit)}{top}</span> "
                 f"<span class='hint'>(darker = {worse} = worse)</span> ")
    sw = " ".join(f"<span class='sw' style='background:{c}'></span>{esc(t)}" for c, t in items)
    return f"<div class='accept-legend'>{scale}{sw}</div>"


def accept_section_html(sec, renderer):
    f = sec.file
    o = [f"<section id='sec-{esc(sec.id)}' class='fr-section accept' data-kind='accept' data-n='{f.n}' "
         f"data-verdict='{sec.verdict}' data-culprits='{esc(sec.tokens)}'>", f"<h2>{esc(sec.title)}</h2>"]
    c = sec.counts
    o.append(f"<p class='accept-verdict {sec.verdict}' data-verdict='{sec.verdict}'>"
             f"<b>{'ACCEPTED' if sec.verdict == 'pass' else 'NOT ACCEPTED'}</b>: {f.n} nodes, {len(f.pairs)} pairs: "
             f"<span data-count='pass'>{c['pass']}</span> pass, <span data-count='flaky'>{c['flaky']}</span> flaky, "
             f"<span data-count='fail'>{c['fail']}</span> fail</p>")
    for note in sec.notes:
        o.append(f"<p class='note'>{esc(note)}</p>")
    if f.culprits:
        o.append(f"<div class='failed accept-culprits'><h3>{len(f.culprits)} culprit(s)</h3><ul>")
        for cu in f.culprits:
            who = f"node {node_name(f, cu['nodes'][0])}" if cu["kind"] == "node" else \
                f"link {pair_name(f, *cu['nodes'])}"
            o.append(f"<li class='accept-culprit' data-culprit='{cu['kind']}' "
                     f"data-nodes='{' '.join(str(x) for x in cu['nodes'])}'><b>{esc(who)}</b> "
                     f"({len(cu.get('pairs') or [])} failed pair(s)): {esc(cu.get('evidence', ''))}</li>")
        o.append("</ul></div>")
    elif sec.failed:
        o.append("<div class='failed'><h3>No culprit named</h3></div>")
    if sec.failed:
        o.append(f"<div class='failed accept-failed'><h3>{len(sec.failed)} failed pair(s)</h3>")
        o.append(accept_pair_list(sec, sec.failed))
        o.append("</div>")
    if sec.flaky:
        o.append(f"<div class='notes accept-flaky'><b>{len(sec.flaky)} flaky pair(s)</b> (bad, then good on a "
                 "retest: reported, never blamed)")
        o.append(accept_pair_list(sec, sec.flaky))
        o.append("</div>")
    o.append("<div class='notes'>Matrices: row = sender (node a of the pair for symmetric ones), column = "
             "receiver; each pair fills two cells; the values are those of its counting (last) attempt. "
             "Culprit node: its row and column outlined; culprit link: its two cells marked. "
             f"{'Hover a cell for its values and the reasons of a failure.' if f.n <= ACCEPT_TABLE_MAX_N else ''}"
             "</div>")
    o.append("<div class='accept-grid'>")
    for m in sec.matrices:
        painter = AcceptPainter(renderer.mpl, m)
        body = accept_table(sec, m, painter) if m.render == "table" else accept_image_svg(renderer, sec, m, painter)
        kinds = ", ".join(f"{v} {k}" for k, v in m.kinds.items())
        head = f"<h3>{esc(m.title)}{f' ({esc(m.unit)})' if m.unit else ''}</h3>" if m.render == "table" else ""
        o.append(f"<figure class='accept-matrix' id='matrix-{esc(m.id)}' data-matrix='{esc(m.id)}' data-n='{f.n}' "
                 f"data-render='{m.render}' data-culprits='{esc(sec.tokens)}'>{head}"
                 f"{body}{accept_legend(m, painter)}<figcaption>{esc(m.id)}: {f.n} × {f.n} cells ({esc(kinds)})"
                 f"</figcaption></figure>")
    o.append("</div>")
    o.append(accept_tables(sec))
    o.append("</section>")
    return "\n".join(o)


ACCEPT_LIST_SHOWN = 20
ACCEPT_LIST_MAX = 5000


def accept_pair_list(sec, pairs):
    f = sec.file

    def li(p):
        hist = ""
        if len(p.attempts) > 1:
            hist = " [attempts: " + ", ".join(
                "good" if not at.violations and at.status == "ok" else at.status if at.status != "ok" else "bad"
                for at in p.attempts) + "]"
        return (f"<li data-a='{p.a}' data-b='{p.b}' data-verdict='{p.category}'><code>{esc(pair_name(f, p.a, p.b))}"
                f"</code>: {esc('; '.join(sec.reasons(p)) or 'good on retest')}{esc(hist)}</li>")

    o = ["<ul>"] + [li(p) for p in pairs[:ACCEPT_LIST_SHOWN]] + ["</ul>"]
    if len(pairs) > ACCEPT_LIST_SHOWN:
        rest = pairs[ACCEPT_LIST_SHOWN:ACCEPT_LIST_MAX]
        o.append(f"<details><summary>{len(pairs) - ACCEPT_LIST_SHOWN} more</summary><ul>" +
                 "".join(li(p) for p in rest) + "</ul>" +
                 (f"<p>… {len(pairs) - ACCEPT_LIST_MAX} more in the JSON</p>" if len(pairs) > ACCEPT_LIST_MAX else "")
                 + "</details>")
    return "".join(o)


def accept_tables(sec):
    f = sec.file
    o = []
    if f.fleet:
        o.append("<details><summary>Fleet statistics (outlier rule)</summary><table><tr><th>measurement</th>"
                 "<th>pairs</th><th>median</th><th>MAD (×1.4826)</th><th>outlier limit</th></tr>")
        for k, v in f.fleet.items():
            if isinstance(v, dict):
                o.append(f"<tr><th>{esc(k)}</th>" + "".join(
                    f"<td>{esc('' if v.get(x) is None else fmt_num(v[x]) if _is_value(v.get(x)) else v.get(x))}"
                    f"</td>" for x in ("count", "median", "mad", "threshold")) + "</tr>")
        o.append("</table></details>")
    for title, d in (("Spec", f.spec), ("Metadata", f.metadata)):
        if d:
            o.append(f"<details><summary>{title}</summary><table>" + "".join(
                f"<tr><th>{esc(k)}</th><td>{esc(ctx_text(v))}</td></tr>" for k, v in d.items()) + "</table></details>")
    if len(f.pairs) <= 2000:
        o.append(f"<details><summary>All values ({len(f.pairs)} pairs, every attempt)</summary><table><tr>"
                 "<th>pair</th><th>verdict</th><th>attempt</th><th>status</th><th>QPs</th><th>a→b Gb/s</th>"
                 "<th>b→a Gb/s</th><th>bidir Gb/s</th><th>p50 µs</th><th>p99 µs</th><th>max µs</th>"
                 "<th>violations</th></tr>")
        for p in f.pairs:
            for k, at in enumerate(p.attempts):
                bad = at.status != "ok" or at.violations
                cls = " class='diff'" if bad else ""
                vals = "".join(f"<td>{'' if x is None else fmt_num(x)}</td>"
                               for x in (at.bw_ab, at.bw_ba, at.bw_bidir, at.p50, at.p99, at.pmax))
                why = "; ".join([f"{at.status}: {at.reason}"] if at.status != "ok" else []) or "; ".join(
                    str(v.get("text", "")) for v in (at.violations or []) if isinstance(v, dict))
                o.append(f"<tr{cls}><td>{esc(pair_name(f, p.a, p.b))}</td><td>{esc(p.category)}</td><td>{k + 1}</td>"
                         f"<td>{esc(at.status)}</td><td>{esc(at.qps)}</td>{vals}<td>{esc(why)}</td></tr>")
        o.append("</table></details>")
    else:
        o.append(f"<p class='note'>{len(f.pairs)} pairs: the values of every pair are in the JSON; the failed and "
                 "flaky ones are listed above.</p>")
    return "\n".join(o)


ACCEPT_CSS = """
.accept-verdict{font-size:1.1em}.accept-verdict.pass b{color:#1a7f1a}.accept-verdict.fail b{color:#b00}
.accept-grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:12px}
figure.accept-matrix{margin:0;border:1px solid #e4e4e4;padding:4px;background:#fff}
figure.accept-matrix h3{font-size:.95em;margin:.2em 0}
figure.accept-matrix svg{width:100%;max-width:820px;height:auto;display:block}
figure.accept-matrix figcaption{font-size:11px;color:#666}
table.accept-cells{border-collapse:collapse;font-size:11px}
table.accept-cells td.fr-cell{border:1px solid #fff;min-width:2.6em;height:1.8em;text-align:center;
 vertical-align:middle;padding:0 3px}
table.accept-cells th{font-weight:normal;text-align:center;white-space:nowrap}
table.accept-cells.small td.fr-cell{min-width:.9em;height:.9em;padding:0}
table.accept-cells .cul-row{border-top:3px solid #000!important;border-bottom:3px solid #000!important}
table.accept-cells .cul-col{border-left:3px solid #000!important;border-right:3px solid #000!important}
table.accept-cells td.cul-link{box-shadow:inset 0 0 0 2px #fff,inset 0 0 0 4px #000}
table.accept-cells th.cul-row,table.accept-cells th.cul-col{font-weight:bold}
.accept-legend{font-size:11px;margin:.3em 0}.accept-legend .sw{display:inline-block;width:1em;height:1em;
 vertical-align:middle;margin:0 .3em 0 .8em;border:1px solid #999}
.accept-legend .bar{display:inline-block;width:8em;height:.9em;vertical-align:middle;border:1px solid #999}
.accept-legend .hint{color:#666}
"""


