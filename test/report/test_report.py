#!/usr/bin/env python3
"""Tests of tools/fabench-report (host only, no RDMA). Registered with ctest by
test/report/CMakeLists.txt (label unit):

  test_report.py golden CASE        structure of CASE's fixtures == golden/CASE.json
  test_report.py bad-input          bad files: one error line, exit 2, no traceback
  test_report.py images             --png/--svg write one file per plot
  test_report.py browser ARTIFACTS  headless Chromium: page loads offline, no request,
                                    no console error, every plot with axes and points;
                                    keeps report.html and a screenshot in ARTIFACTS
  test_report.py network-control    the browser checks do catch a page that fetches
  test_report.py update             rewrite golden/*.json from the fixtures

Exit 0 pass, 1 fail, 77 skip (no chromium).
"""

import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOOL = os.path.join(ROOT, "tools", "fabench-report")
FIX = os.path.join(HERE, "fixtures")
GOLDEN = os.path.join(HERE, "golden")

CASES = {
    "lat": ["lat.json"],
    "bw": ["bw.json", "bibw.json"],
    "compare": ["lat.json", "lat_cs.json"],
    "coll": ["coll.json"],
    "failed": ["bw_failed.json"],
    # every kv fixture is a real run but handmade_kv_layouts_2.json, the failed kv benchmark (fixtures/README.md)
    "kv": ["kv.json", "kv_layouts_1.json", "kv_sweep.json"],
    "kv_compare": ["kv_layouts_1.json", "kv_rate_1.json", "kv_layouts_2.json", "kv_rate_2.json"],
    "kv_failed": ["handmade_kv_layouts_2.json"],
    "all": ["lat.json", "lat_cs.json", "bw.json", "bibw.json", "bw_failed.json", "coll.json",
            "kv.json", "kv_layouts_1.json", "kv_sweep.json", "handmade_kv_layouts_2.json"],
}
UNIT = re.compile(r"\((bytes|µs|Gb/s|GB/s|M msg/s|M WR/s|%|×;[^)]*)\)$")

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def ok(msg):
    print("ok:", msg)


def done():
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    return 0


def tool(*args, cwd=None):
    return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def structure(case, tmp):
    out = os.path.join(tmp, f"{case}.json")
    r = tool(*CASES[case], "--structure", out, cwd=FIX)
    if r.returncode != 0:
        fail(f"{case}: fabench-report exited {r.returncode}: {r.stderr.strip()}")
        return None
    with open(out) as f:
        return json.load(f)


# ---- golden

def diff_lines(want, got):
    a = json.dumps(want, indent=1, sort_keys=True).splitlines()
    b = json.dumps(got, indent=1, sort_keys=True).splitlines()
    import difflib
    return "\n".join(list(difflib.unified_diff(a, b, "golden", "now", lineterm="", n=2))[:60])


def golden(case):
    with tempfile.TemporaryDirectory() as tmp:
        got = structure(case, tmp)
    if got is None:
        return done()
    with open(os.path.join(GOLDEN, f"{case}.json")) as f:
        want = json.load(f)
    if got != want:
        fail(f"{case}: the plot structure differs from golden/{case}.json "
             "(if intended: test/report/test_report.py update)\n" + diff_lines(want, got))
    else:
        n = sum(len(s["plots"]) for s in got["sections"])
        pts = sum(x["points"] for s in got["sections"] for p in s["plots"] for x in p["series"])
        ok(f"{case}: {len(got['sections'])} sections, {n} plots, {pts} points as in golden/{case}.json")
    # Whatever the golden says, every axis has a unit (a bar plot's x axis: named categories).
    for s in got["sections"]:
        for p in s["plots"]:
            for ax in ("x_label", "y_label"):
                if ax == "x_label" and p["x_scale"] == "category":
                    if not p.get("categories"):
                        fail(f"{case}: {p['id']}: a bar plot without categories")
                elif not UNIT.search(p[ax]):
                    fail(f"{case}: {p['id']}: {ax} '{p[ax]}' has no unit")
    return done()


def update():
    os.makedirs(GOLDEN, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for case in CASES:
            got = structure(case, tmp)
            if got is not None:
                with open(os.path.join(GOLDEN, f"{case}.json"), "w") as f:
                    json.dump(got, f, indent=1, sort_keys=True, ensure_ascii=False)
                    f.write("\n")
                print("wrote", os.path.join(GOLDEN, f"{case}.json"))
    return done()


# ---- bad input

def bad_input():
    with open(os.path.join(FIX, "lat.json")) as f:
        lat_text = f.read()
    lat = json.loads(lat_text)
    foreign = json.loads(lat_text)
    foreign["context"] = {k: v for k, v in lat["context"].items()
                          if k in ("date", "host_name", "executable", "num_cpus", "mhz_per_cpu", "caches")}
    foreign["context"]["executable"] = "./my_benchmark"
    nameless = json.loads(lat_text)
    del nameless["benchmarks"][0]["name"]
    cases = [
        ("missing.json", None, r"missing\.json: cannot read \(No such file or directory\)$"),
        ("empty.json", "", r"empty\.json: not JSON \(empty file\)$"),
        ("text.json", "fabench-lat: error: no device\nsee --help\n", r"text\.json: not JSON \(line 1, column 1: "),
        ("truncated.json", "\n".join(lat_text.splitlines()[:40]), r"truncated\.json: not JSON \(line 40, "),
        ("binary.json", b"\x89PNG\r\n\x1a\n\xff\xfe", r"binary\.json: not JSON \(not UTF-8 text\)$"),
        ("list.json", "[1, 2, 3]", r"list\.json: not a fabench run \(JSON, but not Google Benchmark output"),
        ("foreign.json", json.dumps(foreign), r"foreign\.json: not a fabench run \(Google Benchmark output of "
                                              r"\./my_benchmark, but its context has none of fabench's keys"),
        ("nameless.json", json.dumps(nameless), r"nameless\.json: not a fabench run \(benchmark #1 has no name\)$"),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for name, content, want in cases:
            path = os.path.join(tmp, name)
            if content is not None:
                with open(path, "wb") as f:
                    f.write(content.encode() if isinstance(content, str) else content)
            # The bad file after a good one: still refused, nothing written.
            r = tool(os.path.join(FIX, "lat.json"), path, "-o", os.path.join(tmp, "r.html"))
            lines = r.stderr.strip().splitlines()
            if r.returncode != 2:
                fail(f"{name}: exit {r.returncode}, expected 2")
            elif "Traceback" in r.stderr or len(lines) != 1:
                fail(f"{name}: stderr is not one line:\n{r.stderr}")
            elif not re.match(r"fabench-report: error: " + re.escape(tmp) + "/" + want, lines[0]):
                fail(f"{name}: unexpected message: {lines[0]}")
            elif os.path.exists(os.path.join(tmp, "r.html")):
                fail(f"{name}: a report was written despite the error")
            else:
                ok(f"{name}: {lines[0]}")
        # Usage and output errors: exit 2, no traceback.
        for args, want in (([os.path.join(FIX, "lat.json")], "nothing to write"),
                           ([os.path.join(FIX, "lat.json"), "-o", "/proc/no/such/dir/r.html"], "cannot write")):
            r = tool(*args)
            if r.returncode != 2 or "Traceback" in r.stderr or want not in r.stderr:
                fail(f"{args}: exit {r.returncode}: {r.stderr}")
            else:
                ok(f"usage/output error: {r.stderr.strip().splitlines()[-1]}")
        odd_but_valid(tmp, lat, lat_text)
    return done()


def odd_but_valid(tmp, lat, lat_text):
    """Files that are odd but valid: each gets a report, no error."""
    # Degenerate but valid: no benchmarks at all; every benchmark failed.
    empty = dict(lat, benchmarks=[])
    allfail = json.loads(lat_text)
    for b in allfail["benchmarks"]:
        for k in [k for k in b if k.endswith("_us") or k == "samples"]:
            del b[k]
        b["error_occurred"] = True
        b["error_message"] = "peer gone: the follower closed its connection"
    # A binary with no dedicated layout yet: LAYOUT/SIZE names, rate counters. The same names
    # from fabench-kv, which does not write them: its section lists them, plots none.
    with open(os.path.join(FIX, "bw.json")) as f:
        future = json.load(f)
    future["context"]["executable"] = "build/default/bench/fabench-future"
    for i, b in enumerate(future["benchmarks"]):
        b["name"] = b["run_name"] = f"kv/{('layer', 'block')[i % 2]}/{b['name'].split('/')[2]}/manual_time"
    oddkv = json.loads(json.dumps(future))
    oddkv["context"]["executable"] = "build/default/bench/fabench-kv"
    for name, doc, check in (("nobench.json", empty, "no benchmarks in this run"),
                             ("allfailed.json", allfail, "failed"),
                             ("futurelike.json", future, "future-gbps-efficiency"),
                             ("oddkv.json", oddkv, "10 benchmark(s) named neither")):
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            json.dump(doc, f)
        out, st = os.path.join(tmp, name + ".html"), os.path.join(tmp, name + ".s.json")
        r = tool(path, "-o", out, "--structure", st)
        if r.returncode != 0 or "Traceback" in r.stderr:
            fail(f"{name}: exit {r.returncode}: {r.stderr}")
            continue
        with open(st) as f:
            s = json.load(f)
        text = json.dumps(s)
        if check not in text:
            fail(f"{name}: structure lacks '{check}'")
        elif name == "allfailed.json" and (len(s["sections"][0].get("failed", [])) != 25 or any(
                x["kind"] != "failed" for p in s["sections"][0]["plots"] for x in p["series"])):
            fail(f"{name}: 25 failed benchmarks not all shown as failed: {text[:400]}")
        else:
            ok(f"{name}: report written ({check})")


# ---- images

def images():
    with tempfile.TemporaryDirectory() as tmp:
        files = ["lat.json", "bw.json", "bibw.json", "kv_layouts_1.json", "kv_sweep.json",
                 "handmade_kv_layouts_2.json"]
        st = os.path.join(tmp, "s.json")
        r = tool(*files, "--png", os.path.join(tmp, "png"), "--svg", os.path.join(tmp, "svg"),
                 "--structure", st, cwd=FIX)
        if r.returncode != 0:
            fail(f"exit {r.returncode}: {r.stderr}")
            return done()
        with open(st) as f:
            plots = {p["id"]: p for s in json.load(f)["sections"] for p in s["plots"]}
        import xml.etree.ElementTree as ET
        for kind in ("png", "svg"):
            got = sorted(os.listdir(os.path.join(tmp, kind)))
            want = sorted(f"{pid}.{kind}" for pid in plots)
            if got != want:
                fail(f"--{kind}: files {got}, expected {want}")
                continue
            for name in got:
                path = os.path.join(tmp, kind, name)
                pid = name.rsplit(".", 1)[0]
                if kind == "png":
                    with open(path, "rb") as f:
                        if f.read(8) != b"\x89PNG\r\n\x1a\n":
                            fail(f"{name}: not a PNG")
                else:
                    root = ET.parse(path).getroot()
                    titles = [t.text for t in root.iter("{http://www.w3.org/2000/svg}title")]
                    n = sum(x["points"] for x in plots[pid]["series"]) + n_lines(plots[pid])
                    if len(titles) != n:
                        fail(f"{name}: {len(titles)} <title> tooltips, expected {n}")
            ok(f"--{kind}: {len(got)} files, one per plot")
    return done()


# ---- browser

CHROMIUM_FLAGS = [
    "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--hide-scrollbars",
    "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-default-apps",
    "--disable-extensions", "--no-pings", "--disable-domain-reliability", "--disable-breakpad",
    "--disable-client-side-phishing-detection",
    "--host-resolver-rules=MAP * ~NOTFOUND",  # a fetch could not reach anything anyway
    "--enable-logging=stderr", "--log-level=0",  # console messages appear as INFO:CONSOLE lines
    "--window-size=1200,3000",
]
EXTERNAL_REF = re.compile(
    r"""\b(?:src|href|xlink:href|action|poster|srcset|data)\s*=\s*["']?\s*(?!#|["'])[^\s"'>]+"""
    r"""|url\(\s*["']?\s*(?!#)[^)\s]|@import|<link\b|<iframe\b|<object\b|<embed\b""", re.I)


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def static_refs(text):
    """Every attribute or CSS reference to something outside the page."""
    return sorted({m.group(0)[:80] for m in EXTERNAL_REF.finditer(text)})


def run_chromium(page, tmp, screenshot=None):
    """(DOM check JSON or None, console lines, page-initiated URL requests)."""
    netlog = os.path.join(tmp, "netlog.json")
    args = [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={os.path.join(tmp, 'profile')}",
            f"--log-net-log={netlog}", "--net-log-capture-mode=Everything", "--dump-dom"]
    if screenshot:
        args.append(f"--screenshot={screenshot}")
    args.append("file://" + page)
    r = subprocess.run(args, capture_output=True, text=True, timeout=90)
    console = [line for line in r.stderr.splitlines() if ":CONSOLE" in line]
    m = re.search(r'<pre id="fr-check">(.*?)</pre>', r.stdout, re.S)
    check = json.loads(html.unescape(m.group(1))) if m and m.group(1).strip() else None
    requests = []
    with open(netlog) as f:
        text = f.read()
    try:
        log = json.loads(text)
    except json.JSONDecodeError:  # killed before closing the log: it ends "...,"
        log = json.loads(text.rstrip().rstrip(",") + "]}")
    names = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    for e in log["events"]:
        p = e.get("params") or {}
        # Requests a page starts carry its origin ("null" for file://); the
        # browser's own (component updater, ...) say "not an origin".
        if names.get(e["type"]) == "URL_REQUEST_START_JOB" and "url" in p and p.get("initiator") != "not an origin":
            if not str(p["url"]).startswith(("file:", "data:")):
                requests.append(p["url"])
    return check, console, requests, r


def n_lines(plot):
    """Reference lines: horizontal (ceilings, 100 %, ratio 1) and vertical (a sweep's knees)."""
    return len(plot["lines"]) + len(plot.get("vlines", []))


def check_page(label, page, tmp, want_plots, screenshot=None):
    """Failure messages for the page (empty: it passed)."""
    problems = []
    with open(page, encoding="utf-8") as f:
        text = f.read()
    refs = static_refs(text)
    if refs:
        problems.append(f"{label}: references outside the page: {refs}")
    check, console, requests, r = run_chromium(page, tmp, screenshot)
    if check is None:
        problems.append(f"{label}: no #fr-check in the DOM (chromium exit {r.returncode}): {r.stderr[-800:]}")
        return problems
    if requests:
        problems.append(f"{label}: the page attempted network requests (net log): {requests}")
    if check["resources"]:
        problems.append(f"{label}: the page loaded resources: {check['resources']}")
    if check["errors"]:
        problems.append(f"{label}: errors in the page: {check['errors']}")
    if console:
        problems.append(f"{label}: console output: {console}")
    got = {p["id"]: p for p in check["plots"]}
    if sorted(got) != sorted(want_plots):
        problems.append(f"{label}: plots in the page {sorted(got)}, expected {sorted(want_plots)}")
    for pid, want in want_plots.items():
        g = got.get(pid)
        if not g:
            continue
        n = sum(s["points"] for s in want["series"])
        nf = sum(s["points"] for s in want["series"] if s["kind"] == "failed")
        if not g["svg"]:
            problems.append(f"{label}: {pid}: no <svg>")
        if (g["points"], g["tooltips"], g["failed"], g["lines"]) != (n, n, nf, n_lines(want)):
            problems.append(f"{label}: {pid}: {g['points']} points ({g['tooltips']} with a tooltip, {g['failed']} "
                            f"failed), {g['lines']} lines; expected {n} ({nf} failed), {n_lines(want)} lines")
        if want["x_scale"] == "category" and g["xticks"] != want["categories"]:
            problems.append(f"{label}: {pid}: x tick labels {g['xticks']}, expected {want['categories']}")
        for k in ("title", "x_label", "y_label"):
            if g[k] != want[k]:
                problems.append(f"{label}: {pid}: {k} in the page '{g[k]}', expected '{want[k]}'")
    return problems


def kv_coverage(plots):
    """The page under test has each kind of KV plot: bars with a failed one, a sweep with its knee
    lines, a bar ratio plot (so the browser checks cover them)."""
    kinds = {
        "KV efficiency bars with a failed benchmark": lambda p: p["id"].endswith("-efficiency") and p["x_scale"] ==
        "category" and any(s["kind"] == "failed" for s in p["series"]),
        "KV GB/s bars with the link rate": lambda p: p["id"].startswith("kv-") and p["id"].endswith("-gbps") and
        p["x_scale"] == "category" and p["lines"],
        "WR sweep GB/s with knee lines": lambda p: p["id"] == "kv-wr-gbps" and p.get("vlines"),
        "WR sweep WR rate": lambda p: p["id"] == "kv-wr-rate",
        "KV ratio bars": lambda p: p["id"] == "cmp-kv-gbps" and p["x_scale"] == "category",
    }
    return [f"no {what} in the page under test" for what, has in kinds.items() if not any(map(has, plots.values()))]


def browser(artifacts):
    if not chromium():
        print("SKIP: no chromium (tools/install-deps installs it)")
        return 77
    os.makedirs(artifacts, exist_ok=True)
    page = os.path.join(artifacts, "report.html")
    st = os.path.join(artifacts, "structure.json")
    shot = os.path.join(artifacts, "report.png")
    for p in (page, st, shot):
        if os.path.exists(p):
            os.remove(p)
    r = tool(*CASES["all"], "-o", page, "--structure", st, cwd=FIX)
    if r.returncode != 0:
        fail(f"fabench-report exited {r.returncode}: {r.stderr}")
        return done()
    with open(st) as f:
        want = {p["id"]: p for s in json.load(f)["sections"] for p in s["plots"]}
    for msg in kv_coverage(want):
        fail(msg)
    with tempfile.TemporaryDirectory() as tmp:
        for msg in check_page("report.html", page, tmp, want, screenshot=shot):
            fail(msg)
    if not os.path.exists(shot) or os.path.getsize(shot) < 10000:
        fail(f"no screenshot at {shot}")
    if not failures:
        pts = sum(s["points"] for p in want.values() for s in p["series"])
        ok(f"{len(want)} plots, {pts} points, every one with its tooltip and both axis labels; "
           "no network request, no resource, no console message, no error")
        ok(f"artefacts: {page}, {shot}")
    return done()


def network_control():
    """The same checks on a copy of a report that fetches, logs and throws: each must notice."""
    if not chromium():
        print("SKIP: no chromium (tools/install-deps installs it)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        page, st = os.path.join(tmp, "bad.html"), os.path.join(tmp, "s.json")
        r = tool("lat.json", "-o", page, "--structure", st, cwd=FIX)
        if r.returncode != 0:
            fail(f"fabench-report exited {r.returncode}: {r.stderr}")
            return done()
        with open(st) as f:
            want = {p["id"]: p for s in json.load(f)["sections"] for p in s["plots"]}
        with open(page, encoding="utf-8") as f:
            text = f.read()
        with open(page, "w", encoding="utf-8") as f:
            f.write(text.replace("<h1>fabench report</h1>",
                                 "<h1>fabench report</h1><img src='http://example.com/x.png'>"
                                 "<script>console.error('control'); fetch('https://example.org/y');</script>", 1))
        problems = check_page("control", page, tmp, want)
        for need in ("references outside the page", "attempted network requests", "loaded resources",
                     "errors in the page", "console output"):
            hit = [p for p in problems if need in p]
            if hit:
                ok(f"caught: {hit[0][:150]}")
            else:
                fail(f"the control page was not caught by the '{need}' check; problems seen: {problems}")
    return done()


def main(argv):
    if not argv:
        print(__doc__)
        return 2
    cmd = argv[0]
    if cmd == "golden" and len(argv) == 2 and argv[1] in CASES:
        return golden(argv[1])
    if cmd == "bad-input":
        return bad_input()
    if cmd == "images":
        return images()
    if cmd == "browser" and len(argv) == 2:
        return browser(os.path.abspath(argv[1]))
    if cmd == "network-control":
        return network_control()
    if cmd == "update":
        return update()
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
