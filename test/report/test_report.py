#!/usr/bin/env python3
"""Tests of tools/fabench-report and its package tools/fabench_report (host only, no RDMA).
Registered with ctest by test/report/CMakeLists.txt (label unit):

  test_report.py golden CASE        structure of CASE's fixtures == golden/CASE.json
  test_report.py bad-input          bad files: one error line, exit 2, no traceback
  test_report.py images             --png/--svg write one file per plot
  test_report.py browser ARTIFACTS  headless Chromium: page loads offline, no request,
                                    no console error, every plot with axes and points;
                                    keeps report.html and a screenshot in ARTIFACTS
  test_report.py network-control    the browser checks do catch a page that fetches
  test_report.py accept-browser GENERATOR ARTIFACTS [--expect-4 CULPRITS] [--expect-1024 CULPRITS]
                                    fabench-accept reports in headless Chromium: the 4-node
                                    fixture (a table cell per pair and direction) and a
                                    1024-node synthetic run that GENERATOR (the helper
                                    fabench_accept_synth_report) writes (one PNG per matrix):
                                    N x N, the culprits marked and no others (CULPRITS:
                                    "node:1 link:2-3", what the scenario was told)
  test_report.py accept-page JSON N CULPRITS [SCREENSHOT]
                                    a real fabench-accept report of N nodes (vm:accept_fabric)
                                    in headless Chromium: N x N cells, CULPRITS marked, no other
  test_report.py version            -V/--version print fabench's version (CMakeLists.txt's)
  test_report.py installed          the shim and the package laid out as CMake installs them
                                    (PREFIX/bin, PREFIX/share/fabench/python): found, VERSION read
  test_report.py mismatch           runs of different devices, link rates and hosts: one warning
                                    line on stderr and a banner; same fabric, different mode: none
  test_report.py units              the units box names only what the page draws
  test_report.py legend             latency percentiles that meet (p99 = p99.9 = max): each legend
                                    entry's colour still drawn inside the axes
  test_report.py axes               every y axis of the fixtures' plots has at least 3 labelled ticks
  test_report.py gbjson             the Google Benchmark JSON reader (fabench_report.gbjson)
  test_report.py mismatch-browser   headless Chromium: the banner shows for a different-device
                                    comparison and not for a same-device one; the latency axes
                                    have at least 3 labelled ticks
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
import time
from html.parser import HTMLParser

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOOL = os.path.join(ROOT, "tools", "fabench-report")
sys.path.insert(0, os.path.join(ROOT, "tools"))
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
    # fabench-ep, from bench/compare/ep.sh (fixtures/README.md): low-latency at 4 ranks, uniform and
    # hot-rank 2 and 4 (one run); and normal mode at 2 and 4 ranks (two runs: the EP-size plot),
    # the first joined by the low-latency run with its reference (write + notify)
    "ep": ["ep_skew_uniform_4.json", "ep_skew_hot2_4.json", "ep_skew_hot4_4.json"],
    "ep_sizes": ["ep_normal_2.json", "ep_ll_2.json", "ep_normal_4.json"],
    "all": ["lat.json", "lat_cs.json", "bw.json", "bibw.json", "bw_failed.json", "coll.json",
            "kv.json", "kv_layouts_1.json", "kv_sweep.json", "handmade_kv_layouts_2.json", "ep_normal_2.json",
            "ep_ll_2.json"],
    # fabench-congest, from one vm:congest_port run (fixtures/README.md): the limited port named,
    # and the even run (two runs: the comparison's CIF ratios)
    "congest": ["congest_limited.json", "congest_even.json"],
    # fabench-accept's JSON; synthetic (fixtures/README.md): 4 nodes, node 1 bad, link 3->2 slow
    "accept": ["synthetic_accept_4.json"],
}
UNIT = re.compile(r"\((bytes|µs|Gb/s|GB/s|M msg/s|M WR/s|%|tokens|×;[^)]*)\)$")

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
    with open(os.path.join(FIX, "synthetic_accept_4.json")) as f:
        acc_text = f.read()
    acc_v2 = json.loads(acc_text)
    acc_v2["fabench_accept"] = 2
    acc_range = json.loads(acc_text)
    acc_range["pairs"][3]["b"] = 4
    acc_value = json.loads(acc_text)
    acc_value["pairs"][0]["attempts"][-1]["lat_p50_us"] = "fast"
    acc_culprit = json.loads(acc_text)
    acc_culprit["culprits"][0]["nodes"] = [9]
    cases += [
        ("accept_v2.json", json.dumps(acc_v2), r"accept_v2\.json: fabench-accept report format 2; this fabench-report "
                                               r"reads format 1$"),
        ("accept_range.json", json.dumps(acc_range), r"accept_range\.json: not a fabench-accept report \(pairs\[3\]: "
                                                     r"a and b must be two node indexes within 0\.\.3"),
        ("accept_value.json", json.dumps(acc_value), r"accept_value\.json: not a fabench-accept report \(pairs\[0\]: "
                                                     r"its last attempt's lat_p50_us is neither a number nor null\)$"),
        ("accept_culprit.json", json.dumps(acc_culprit), r"accept_culprit\.json: not a fabench-accept report "
                                                         r"\(culprits\[0\] must have kind node"),
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
    r"""\b(?:src|href|xlink:href|action|poster|srcset|data)\s*=\s*["']?\s*(?!#|["']|data:)[^\s"'>]+"""
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


def run_chromium(page, tmp, screenshot=None, extra=()):
    """(DOM check JSON or None, console lines, page-initiated URL requests)."""
    netlog = os.path.join(tmp, "netlog.json")
    args = [chromium(), *CHROMIUM_FLAGS, *extra, f"--user-data-dir={os.path.join(tmp, 'profile')}",
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


def check_page(label, page, tmp, want_plots, screenshot=None, extra=(), got_dom=None):
    """Failure messages for the page (empty: it passed). got_dom: a list, gets the DOM and the check."""
    problems = []
    with open(page, encoding="utf-8") as f:
        text = f.read()
    refs = static_refs(text)
    if refs:
        problems.append(f"{label}: references outside the page: {refs}")
    check, console, requests, r = run_chromium(page, tmp, screenshot, extra)
    if got_dom is not None:
        got_dom.extend([r.stdout, check])
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
        if len(g["yticks"]) < 3:
            problems.append(f"{label}: {pid}: {len(g['yticks'])} labelled y ticks in the page ({g['yticks']}), "
                            "expected at least 3")
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


# ---- fabench-accept reports in the browser

ACCEPT_4 = "node:1 link:2-3"  # what synthetic_accept_4.json was made with (fixtures/README.md)
# The 1024-node run the test generates: its scenario and the culprits it must show.
ACCEPT_1024_ARGS = ["--nodes", "1024", "--bad-node", "517", "--bad-link", "100-900", "--seed", "7"]
ACCEPT_1024 = "node:517 link:100-900"


class DomScan(HTMLParser):
    """From a dumped DOM: every figure.accept-matrix with its cells (td.fr-cell), marked headers and
    culprit marks ([data-culprit] in it), the culprit list items, and the number of elements."""

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

    def __init__(self):
        super().__init__()
        self.elements = 0
        self.figures = []
        self.culprit_items = []
        self.section = None
        self.depth = 0
        self.fig_depth = None

    def handle_starttag(self, tag, attrs):
        self.elements += 1
        a = dict(attrs)
        if tag not in self.VOID:
            self.depth += 1
        cls = (a.get("class") or "").split()
        if tag == "section" and "accept" in cls:
            self.section = a
        if tag == "figure" and "accept-matrix" in cls:
            self.figures.append({"attrs": a, "cells": [], "marks": [], "headers": []})
            self.fig_depth = self.depth
        elif self.fig_depth is not None:
            fig = self.figures[-1]
            if tag == "td" and "fr-cell" in cls:
                fig["cells"].append(a)
            elif tag == "th" and "data-culprit" in a:
                fig["headers"].append(a)
            elif "data-culprit" in a:
                fig["marks"].append(a)
        if tag == "li" and "accept-culprit" in cls:
            self.culprit_items.append(a)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID:
            self.depth -= 1

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if self.fig_depth is not None and self.depth == self.fig_depth and tag == "figure":
            self.fig_depth = None
        self.depth -= 1


def parse_culprits(text):
    """"node:1 link:2-3" -> ({1}, {(2, 3)})"""
    nodes, links = set(), set()
    for tok in text.split():
        kind, _, what = tok.partition(":")
        if kind == "node":
            nodes.add(int(what))
        else:
            a, b = map(int, what.split("-"))
            links.add((min(a, b), max(a, b)))
    return nodes, links


def check_accept_dom(label, dom, check, n, render, expect):
    """Failure messages: every matrix N x N in its rendering, the expected culprits marked and no others."""
    problems = []
    scan = DomScan()
    scan.feed(dom)
    nodes, links = parse_culprits(expect)
    want_tokens = sorted(expect.split())
    if scan.section is None or scan.section.get("data-n") != str(n):
        problems.append(f"{label}: no section.accept with data-n={n}: {scan.section}")
    if len(scan.figures) != 5:
        problems.append(f"{label}: {len(scan.figures)} accept matrices in the DOM, expected 5")
    items = sorted((a.get("data-culprit"), a.get("data-nodes")) for a in scan.culprit_items)
    want_items = sorted([("node", str(x)) for x in nodes] + [("link", f"{a} {b}") for a, b in links])
    if items != want_items:
        problems.append(f"{label}: culprit list {items}, expected {want_items}")
    for fig in scan.figures:
        a = fig["attrs"]
        mid = a.get("data-matrix")
        if (a.get("data-n"), a.get("data-render")) != (str(n), render):
            problems.append(f"{label}: {mid}: data-n={a.get('data-n')} data-render={a.get('data-render')}, "
                            f"expected {n} {render}")
        if sorted((a.get("data-culprits") or "").split()) != want_tokens:
            problems.append(f"{label}: {mid}: data-culprits '{a.get('data-culprits')}', expected '{expect}'")
        if render == "table":
            cells = {(int(c["data-a"]), int(c["data-b"])): c for c in fig["cells"]}
            if len(fig["cells"]) != n * n or len(cells) != n * n:
                problems.append(f"{label}: {mid}: {len(fig['cells'])} cells ({len(cells)} distinct), expected "
                                f"{n} x {n} = {n * n}")
            got_node = {k for k, c in cells.items() if "node" in c.get("data-culprit", "").split()}
            got_link = {k for k, c in cells.items() if "link" in c.get("data-culprit", "").split()}
            want_node = {(x, y) for x in range(n) for y in range(n) if x in nodes or y in nodes}
            want_link = {k for a_, b_ in links for k in ((a_, b_), (b_, a_))}
            if got_node != want_node:
                problems.append(f"{label}: {mid}: cells marked node {sorted(got_node)}, expected the rows and "
                                f"columns of {sorted(nodes)}: {sorted(want_node)}")
            if got_link != want_link:
                problems.append(f"{label}: {mid}: cells marked link {sorted(got_link)}, expected {sorted(want_link)}")
            heads = sorted(int(h["data-node"]) for h in fig["headers"])
            if heads != sorted(list(nodes) * 2):
                problems.append(f"{label}: {mid}: headers marked {heads}, expected a row and a column header for "
                                f"{sorted(nodes)}")
            bad_verdict = [k for k, c in cells.items() if c.get("data-verdict") not in
                           ("pass", "flaky", "fail", "timeout", "unmeasured")]
            diag = [k for k in cells if k[0] == k[1] and cells[k].get("data-verdict") != "unmeasured"]
            if bad_verdict or diag:
                problems.append(f"{label}: {mid}: cells without a verdict {bad_verdict[:5]}, measured diagonal {diag}")
        else:
            if fig["cells"]:
                problems.append(f"{label}: {mid}: {len(fig['cells'])} table cells in an image matrix")
            # A link's marks sit on (a, b) and (b, a): compared without the order.
            got = sorted((m.get("data-culprit"), m.get("data-node") or
                          "-".join(sorted((m.get("data-a") or "", m.get("data-b") or ""))), m.get("data-mark"))
                         for m in fig["marks"])
            want = sorted([("node", str(x), part) for x in nodes for part in ("row", "col")] +
                          [("link", "-".join(sorted((str(x), str(y)))), part) for x, y in links
                           for part in ("ab", "ba")])
            if got != want:
                problems.append(f"{label}: {mid}: culprit marks {got}, expected {want}")
    if check is None:
        problems.append(f"{label}: no #fr-check")
    else:
        mats = check.get("matrices", [])
        if len(mats) != 5:
            problems.append(f"{label}: the page counted {len(mats)} matrices, expected 5")
        for mat in mats:
            if render == "image" and mat["image"] != [n, n]:
                problems.append(f"{label}: {mat['id']}: the heatmap image decodes to {mat['image']}, expected "
                                f"[{n}, {n}] (a pixel per cell)")
            if render == "table" and mat["cells"] != n * n:
                problems.append(f"{label}: {mat['id']}: {mat['cells']} cells counted by the page")
    return problems, scan


def accept_browser(generator, artifacts, expect4, expect1024):
    if not chromium():
        print("SKIP: no chromium (tools/install-deps installs it)")
        return 77
    os.makedirs(artifacts, exist_ok=True)
    flags = ["--virtual-time-budget=10000"]  # lets the page decode its heatmap PNGs before the dump
    with tempfile.TemporaryDirectory() as tmp:
        # N = 4: the fixture, tables.
        page = os.path.join(artifacts, "accept_4.html")
        r = tool("synthetic_accept_4.json", "-o", page, cwd=FIX)
        if r.returncode != 0:
            fail(f"fabench-report (4 nodes) exited {r.returncode}: {r.stderr}")
            return done()
        got = []
        problems = check_page("accept_4.html", page, tmp, {}, extra=flags, got_dom=got)
        more, scan = check_accept_dom("accept_4.html", got[0], got[1], 4, "table", expect4)
        for msg in problems + more:
            fail(msg)
        if not problems + more:
            ok(f"4 nodes: 5 matrices of 4 x 4 table cells, culprits {expect4} marked and no other cell; offline, "
               "no console message, no error")
        # N = 1024: generated now, images.
        data = os.path.join(tmp, "accept_1024.json")
        t0 = time.monotonic()
        g = subprocess.run([generator, *ACCEPT_1024_ARGS, "-o", data], capture_output=True, text=True, timeout=240)
        t1 = time.monotonic()
        if g.returncode != 0:
            fail(f"{generator} exited {g.returncode}: {g.stderr}")
            return done()
        page = os.path.join(artifacts, "accept_1024.html")
        r = tool(data, "-o", page)
        t2 = time.monotonic()
        if r.returncode != 0:
            fail(f"fabench-report (1024 nodes) exited {r.returncode}: {r.stderr}")
            return done()
        size = os.path.getsize(page)
        if size > 20e6:
            fail(f"accept_1024.html is {size / 1e6:.1f} MB, above 20 MB")
        got = []
        shot = os.path.join(artifacts, "accept_1024.png")
        problems = check_page("accept_1024.html", page, tmp, {}, screenshot=shot, extra=flags, got_dom=got)
        t3 = time.monotonic()
        more, scan = check_accept_dom("accept_1024.html", got[0], got[1], 1024, "image", expect1024)
        if scan.elements > 20000:
            more.append(f"accept_1024.html: {scan.elements} elements in the DOM (a cell each would be 1 M)")
        for msg in problems + more:
            fail(msg)
        if not problems + more:
            ok(f"1024 nodes: 5 matrices of 1024 x 1024 (one PNG each, decoded at 1024 x 1024 px), culprits "
               f"{expect1024} marked and nothing else; {scan.elements} DOM elements; offline, no error")
        print(f"info: 1024 nodes: JSON {os.path.getsize(data) / 1e6:.0f} MB written in {t1 - t0:.1f} s, HTML "
           f"{size / 1e6:.1f} MB in {t2 - t1:.1f} s, Chromium load + dump + screenshot {t3 - t2:.1f} s; "
           f"artefacts: {page}, {shot}")
    return done()


def accept_page(data, n, expect, screenshot=None):
    """A real fabench-accept report (the test bed's, vm:accept_fabric): rendered, N x N table
    cells per matrix, the expected culprits marked and no others."""
    if not chromium():
        print("SKIP: no chromium (tools/install-deps installs it)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        page = os.path.join(tmp, "accept.html")
        r = tool(os.path.abspath(data), "-o", page)
        if r.returncode != 0:
            fail(f"fabench-report {data} exited {r.returncode}: {r.stderr}")
            return done()
        got = []
        problems = check_page(os.path.basename(data), page, tmp, {}, screenshot=screenshot,
                              extra=["--virtual-time-budget=10000"], got_dom=got)
        more, _ = check_accept_dom(os.path.basename(data), got[0], got[1], n, "table", expect) if got else ([], None)
        for msg in problems + more:
            fail(msg)
        if not problems + more:
            ok(f"{os.path.basename(data)}: rendered in Chromium, 5 matrices of {n} x {n} cells, culprits "
               f"'{expect}' marked and no other")
    return done()

# ---- version, installed layout

def cmake_version():
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        return re.search(r"project\(fabench VERSION ([^ )]+)", f.read()).group(1)


def version_flag():
    want = cmake_version()
    for flag in ("-V", "--version"):
        r = tool(flag)
        if r.returncode != 0 or r.stdout.strip() != want or r.stderr:
            fail(f"{flag}: exit {r.returncode}, stdout {r.stdout!r}, stderr {r.stderr!r}; expected {want!r}")
        else:
            ok(f"{flag}: {want} (CMakeLists.txt's PROJECT_VERSION)")
    return done()


def installed():
    """The layout of CMakeLists.txt's install rules, copied by hand: the shim in PREFIX/bin, the
    package and its VERSION in PREFIX/share/fabench/python; run through a symlink too."""
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "prefix")
        os.makedirs(os.path.join(prefix, "bin"))
        shutil.copy(TOOL, os.path.join(prefix, "bin", "fabench-report"))
        pkg = os.path.join(prefix, "share", "fabench", "python", "fabench_report")
        shutil.copytree(os.path.join(ROOT, "tools", "fabench_report"), pkg,
                        ignore=shutil.ignore_patterns("__pycache__"))
        with open(os.path.join(pkg, "VERSION"), "w") as f:
            f.write("9.8.7-installed\n")
        link = os.path.join(tmp, "elsewhere", "fr")
        os.makedirs(os.path.dirname(link))
        os.symlink(os.path.join(prefix, "bin", "fabench-report"), link)
        for shim in (os.path.join(prefix, "bin", "fabench-report"), link):
            r = subprocess.run([sys.executable, shim, "--version"], capture_output=True, text=True, timeout=60)
            if r.returncode != 0 or r.stdout.strip() != "9.8.7-installed":
                fail(f"installed {shim}: exit {r.returncode}, {r.stdout!r} {r.stderr!r}")
                continue
            st = os.path.join(tmp, "s.json")
            r = subprocess.run([sys.executable, shim, os.path.join(FIX, "lat.json"), "--structure", st],
                               capture_output=True, text=True, timeout=120)
            if r.returncode != 0 or not os.path.exists(st):
                fail(f"installed {shim}: a report: exit {r.returncode}: {r.stderr}")
            else:
                ok(f"installed, run as {os.path.relpath(shim, tmp)}: the package found, VERSION read, report written")
        # Without the package the shim says where it looked: one line, exit 1.
        shutil.rmtree(os.path.join(prefix, "share"))
        r = subprocess.run([sys.executable, link, "-V"], capture_output=True, text=True, timeout=60)
        if r.returncode != 1 or "package is neither in" not in r.stderr or "Traceback" in r.stderr:
            fail(f"no package: exit {r.returncode}: {r.stderr}")
        else:
            ok(f"no package: {r.stderr.strip()}")
    return done()


# ---- comparisons across fabrics

def other_fabric(tmp, name="lat_other.json", **changes):
    """lat.json as if run on another fabric: its context changed."""
    with open(os.path.join(FIX, "lat.json")) as f:
        doc = json.load(f)
    doc["context"].update(changes)
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


OTHER = {"device": "mlx5_0", "port_rate_Gbps": "400", "host": "nodeB"}


def mismatch():
    with tempfile.TemporaryDirectory() as tmp:
        other = other_fabric(tmp, **OTHER)
        for files, want in (([os.path.join(FIX, "lat.json"), other], ["device", "link rate", "host"]),
                            ([os.path.join(FIX, "lat.json"), os.path.join(FIX, "lat_cs.json")], [])):
            page, st = os.path.join(tmp, "r.html"), os.path.join(tmp, "s.json")
            r = tool(*files, "-o", page, "--structure", st)
            if r.returncode != 0:
                fail(f"{files}: exit {r.returncode}: {r.stderr}")
                continue
            warnings = [line for line in r.stderr.splitlines() if "warning:" in line]
            with open(st) as f:
                cmp = next(s for s in json.load(f)["sections"] if s["id"] == "cmp-lat")
            with open(page, encoding="utf-8") as f:
                text = f.read()
            banner = re.search(r"<div class='banner' id='fr-mismatch' role='alert' data-fields='([^']*)'>", text)
            label = " + ".join(os.path.basename(x) for x in files)
            if not want:
                if warnings or banner or "mismatch" in cmp:
                    fail(f"{label}: same fabric, yet warned: {warnings}, banner {bool(banner)}, {cmp.get('mismatch')}")
                else:
                    ok(f"{label}: same device, link rate and host (mode differs): no warning, no banner")
                continue
            if len(warnings) != 1 or not all(w in warnings[0] for w in want) or "mlx5_0" not in warnings[0]:
                fail(f"{label}: expected one warning line naming {want} and mlx5_0: {r.stderr}")
            elif not banner or banner.group(1).split(",") != want:
                fail(f"{label}: the page's banner: {banner.group(0) if banner else 'none'}; expected fields {want}")
            elif cmp.get("mismatch") != {"run 2": want}:
                fail(f"{label}: structure mismatch {cmp.get('mismatch')}, expected {{'run 2': {want}}}")
            elif f"id='fr-mismatch-cmp-lat-run2'" not in text:
                fail(f"{label}: no banner in the comparison section")
            else:
                ok(f"{label}: {warnings[0]}")
                ok(f"{label}: banner on top (fields {banner.group(1)}) and in the comparison section")
    return done()


# ---- units box

def units_box(files, tmp):
    page = os.path.join(tmp, "u.html")
    r = tool(*files, "-o", page, cwd=FIX)
    if r.returncode != 0:
        fail(f"{files}: exit {r.returncode}: {r.stderr}")
        return ""
    with open(page, encoding="utf-8") as f:
        m = re.search(r"<div class='units'>(.*?)</div>", f.read(), re.S)
    return m.group(1) if m else ""


def units():
    cases = [
        # files, what the box must say, what it must not
        (["lat.json"], ["µs", "RTT/2", "KiB"], ["Gb/s", "GB/s", "msg/s", "WR/s", "hatched", "Dotted", "Dashed",
                                                 "Red ×"]),
        (["bw.json", "bibw.json"], ["Gb/s", "M msg/s", "link rate", "Red ×"],
         ["GB/s", "WR/s", "µs", "RTT", "hatched", "Dotted", "ratio 1"]),
        (["kv_layouts_1.json", "kv_layouts_2.json", "kv_sweep.json"],
         ["GB/s", "M WR/s", "hatched", "Dotted", "100 %", "ratio 1"], ["Gb/s", "msg/s", "RTT"]),
        (["synthetic_accept_4.json"], ["Gb/s", "µs"], ["GB/s", "msg/s", "WR/s", "hatched", "Dotted", "Dashed"]),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for files, must, must_not in cases:
            box = units_box(files, tmp)
            missing = [w for w in must if w not in box]
            extra = [w for w in must_not if w in box]
            if missing or extra:
                fail(f"{files}: units box lacks {missing}, has {extra}: {box}")
            else:
                ok(f"{' + '.join(files)}: units box names {must}, not {must_not}")
    return done()


# ---- what the plots draw (matplotlib, through the package)

def lat_doc_meeting():
    """lat.json with p99 = p99.9 = max in every benchmark (a short run's tail)."""
    with open(os.path.join(FIX, "lat.json")) as f:
        doc = json.load(f)
    for b in doc["benchmarks"]:
        if "max_us" in b:
            b["p99_us"] = b["p99.9_us"] = b["max_us"]
    return doc


def colour_visible(renderer, plot):
    """{series name: pixels of its colour inside the axes}, from the figure drawn by Agg."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    fig, _ = renderer.figure(plot)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    img = np.asarray(canvas.buffer_rgba())[:, :, :3].astype(int)
    ax = fig.axes[0]
    x0, y0, x1, y1 = ax.bbox.extents  # pixels, from the bottom
    h = img.shape[0]
    crop = img[int(h - y1) + 2:int(h - y0) - 2, int(x0) + 2:int(x1) - 2]
    out = {}
    for s in plot.series:
        rgb = np.array([round(c * 255) for c in renderer.color(s.color)[:3]])
        out[s.name] = int((np.abs(crop - rgb).sum(axis=2) < 40).sum())
    return out


def legend():
    from fabench_report import gbjson, lat
    from fabench_report.load import RunFile, group_runs
    from fabench_report.render import Renderer
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "lat_meet.json")
        with open(path, "w") as f:
            json.dump(lat_doc_meeting(), f)
        rf = RunFile(path, gbjson.read(path))
    runs = group_runs([rf])["lat"]
    sec = lat.lat_section(runs, "lat", "Latency")
    r = Renderer()
    for plot in sec.plots:
        seen = colour_visible(r, plot)
        hidden = [n for n, px in seen.items() if px < 15]
        if hidden:
            fail(f"{plot.id}: legend entries not visible in the plot: {hidden} ({seen})")
        else:
            ok(f"{plot.id}: p99 = p99.9 = max, and every legend entry shows (pixels of its colour: {seen})")
    # The control: the same plots with one look for all (the look before) hide some.
    plot = sec.plots[0]
    for s in plot.series:
        s.style = {}
    seen = colour_visible(r, plot)
    if all(px >= 15 for px in seen.values()):
        fail(f"control: without the percentiles' own looks every series still shows ({seen}): the check is blind")
    else:
        ok(f"control: one look for all hides {[n for n, px in seen.items() if px < 15]}")
    return done()


def axes():
    """Every plot of the fixtures: a log y axis labels at least 3 ticks (or the plot is linear)."""
    with tempfile.TemporaryDirectory() as tmp:
        got = structure("all", tmp)
    from fabench_report import gbjson  # noqa: F401  (the package imports)
    from fabench_report.model import log_ticks
    for lo, hi, want in ((11, 14, [10, 20]), (3.1, 480, [2, 5, 10, 20, 50, 100, 200, 500]),
                         (0.004, 0.0049, [0.002, 0.005]), (20, 20, [20]), (0.5, 1e6, [0.1, 1, 10, 100, 1e3, 1e4, 1e5, 1e6])):
        t = log_ticks(lo, hi)
        if [round(x, 12) for x in t] != want:
            fail(f"log_ticks({lo}, {hi}) = {t}, expected {want}")
    n = 0
    for s in got["sections"]:
        for p in s["plots"]:
            n += 1
    with tempfile.TemporaryDirectory() as tmp:
        r = tool(*CASES["all"], "--svg", tmp, cwd=FIX)
        if r.returncode != 0:
            fail(f"exit {r.returncode}: {r.stderr}")
            return done()
        import xml.etree.ElementTree as ET
        ns = "{http://www.w3.org/2000/svg}"
        for name in sorted(os.listdir(tmp)):
            root = ET.parse(os.path.join(tmp, name)).getroot()
            labels = []
            for g in root.iter(f"{ns}g"):
                if re.match(r".*-ytick_\d+$", g.get("id", "")):
                    labels += [x.text.strip() for x in g.iter(f"{ns}text") if x.text and x.text.strip()]
            if len(labels) < 3:
                fail(f"{name}: {len(labels)} labelled y ticks: {labels}")
        if not failures:
            ok(f"{n} plots, each y axis with at least 3 labelled ticks; log_ticks at 1-2-5")
    return done()


# ---- the Google Benchmark JSON reader

def gbjson_reader():
    from fabench_report import gbjson
    doc = gbjson.read(os.path.join(FIX, "bw_failed.json"))
    its = gbjson.iterations(doc)
    bad = [b for b in its if gbjson.failed(b)]
    if (len(its), len(bad)) != (4, 2) or not all(gbjson.error(b) for b in bad):
        fail(f"bw_failed.json: {len(its)} runs, {len(bad)} failed; expected 4 and 2 with messages")
    benches = gbjson.benchmarks(doc)
    if [b.key for b in benches][:1] != ["write_bw/rc/4096"] or sum(b.failed for b in benches) != 2:
        fail(f"bw_failed.json: benchmarks {[(b.key, b.failed) for b in benches]}")
    if gbjson.base_name("allreduce/ring/f32/4096/iterations:20/manual_time") != "allreduce/ring/f32/4096":
        fail("base_name keeps Google Benchmark's suffixes")
    # Repetitions: the median of the good ones; aggregates only: the median aggregate.
    rep = {"context": {}, "benchmarks": [
        {"name": "x/1/repeats:3", "run_name": "x/1", "run_type": "iteration", "v": 1.0},
        {"name": "x/1/repeats:3", "run_name": "x/1", "run_type": "iteration", "v": 5.0},
        {"name": "x/1/repeats:3", "run_name": "x/1", "run_type": "iteration", "v": 3.0},
        {"name": "x/1/repeats:3", "run_name": "x/1", "run_type": "iteration", "error_occurred": True,
         "error_message": "peer gone"},
        {"name": "y/2_median", "run_name": "y/2", "run_type": "aggregate", "aggregate_name": "median", "v": 7.0},
        {"name": "y/2_mean", "run_name": "y/2", "run_type": "aggregate", "aggregate_name": "mean", "v": 9.0}]}
    got = {b.key: (b.counters.get("v"), b.ok_reps, b.errors) for b in gbjson.benchmarks(rep)}
    if got != {"x/1": (3.0, 3, ["peer gone"]), "y/2": (7.0, 1, [])}:
        fail(f"repetitions and aggregates: {got}")
    with tempfile.TemporaryDirectory() as tmp:
        cases = [("empty.json", "", "not JSON (empty file)"), ("list.json", "[1]", "not Google Benchmark output"),
                 ("nameless.json", '{"benchmarks": [{}]}', "benchmark #1 has no name"),
                 ("cut.json", '{"benchmarks": [', "not JSON (line 1, column 17")]
        for name, text, want in cases:
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                f.write(text)
            try:
                gbjson.read(path)
                fail(f"{name}: read without an error")
            except gbjson.GBJsonError as e:
                if str(e) != f"{path}: {want}" and not str(e).startswith(f"{path}: {want}"):
                    fail(f"{name}: {e}; expected '{want}'")
        # A run's stdout: log lines, then the JSON (coll.sh reads fabench-coll's so).
        logged = os.path.join(tmp, "logged.json")
        with open(os.path.join(FIX, "lat.json")) as f:
            lat_text = f.read()
        with open(logged, "w") as f:
            f.write("[info] rank 0 of 2\n" + lat_text)
        if len(gbjson.iterations(gbjson.read(logged, skip_leading=True))) != 25:
            fail("skip_leading: the JSON after log lines not read")
        # The command line: name and the counters asked for, a line per run.
        r = subprocess.run([sys.executable, "-m", "fabench_report.gbjson", "--counter", "p50_us", "-"],
                           input=lat_text, capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "tools")))
        lines = r.stdout.splitlines()
        if r.returncode != 0 or len(lines) != 25 or lines[0] != "write_lat/rc/2/iterations:300/manual_time\t41.83":
            fail(f"python3 -m fabench_report.gbjson: exit {r.returncode}, {lines[:2]}, {r.stderr}")
    if not failures:
        ok("gbjson: iterations, failures, medians over repetitions, aggregates, one-line errors, log lines, CLI")
    return done()


def mismatch_browser(artifacts):
    """In Chromium: the different-device comparison shows its banner (visible, naming the device),
    the same-device one none; the latency plots label at least 3 y ticks (check_page)."""
    if not chromium():
        print("SKIP: no chromium (tools/install-deps installs it)")
        return 77
    os.makedirs(artifacts, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        other = other_fabric(tmp, **OTHER)
        for name, files, want in (("mismatch.html", [os.path.join(FIX, "lat.json"), other], True),
                                  ("same_fabric.html", [os.path.join(FIX, "lat.json"),
                                                        os.path.join(FIX, "lat_cs.json")], False)):
            page, st = os.path.join(artifacts, name), os.path.join(tmp, name + ".json")
            r = tool(*files, "-o", page, "--structure", st)
            if r.returncode != 0:
                fail(f"{name}: exit {r.returncode}: {r.stderr}")
                continue
            with open(st) as f:
                plots = {p["id"]: p for s in json.load(f)["sections"] for p in s["plots"]}
            got = []
            shot = os.path.join(artifacts, name.replace(".html", ".png"))
            problems = check_page(name, page, tmp, plots, screenshot=shot if want else None, got_dom=got)
            for msg in problems:
                fail(msg)
            banners = (got[1] or {}).get("banners", []) if len(got) > 1 else []
            top = [b for b in banners if b["id"] == "fr-mismatch"]
            if want and not (top and top[0]["visible"] and "device" in top[0]["fields"] and "mlx5_0" in top[0]["text"]):
                fail(f"{name}: no visible banner naming the device: {banners}")
            elif not want and banners:
                fail(f"{name}: banners on a same-fabric comparison: {banners}")
            elif not problems:
                lat_ticks = {pid: len(p["yticks"]) for pid, p in
                             {p["id"]: p for p in got[1]["plots"]}.items() if pid.startswith("lat-")}
                ok(f"{name}: {'banner shown: ' + top[0]['text'][:120] if want else 'no banner'}; latency plots' "
                   f"labelled y ticks {lat_ticks}")
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
    if cmd == "accept-browser" and len(argv) in (3, 5, 7):
        opts = dict(zip(argv[3::2], argv[4::2]))
        if set(opts) <= {"--expect-4", "--expect-1024"}:
            return accept_browser(os.path.abspath(argv[1]), os.path.abspath(argv[2]),
                                  opts.get("--expect-4", ACCEPT_4), opts.get("--expect-1024", ACCEPT_1024))
    if cmd == "accept-page" and len(argv) in (4, 5):
        return accept_page(argv[1], int(argv[2]), argv[3], os.path.abspath(argv[4]) if len(argv) == 5 else None)
    if cmd == "update":
        return update()
    simple = {"version": version_flag, "installed": installed, "mismatch": mismatch, "units": units,
              "legend": legend, "axes": axes, "gbjson": gbjson_reader}
    if cmd in simple and len(argv) == 1:
        return simple[cmd]()
    if cmd == "mismatch-browser" and len(argv) == 2:
        return mismatch_browser(os.path.abspath(argv[1]))
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
