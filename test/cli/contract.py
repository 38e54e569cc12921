#!/usr/bin/env python3
"""The command-line contract of every fabench binary, checked without RDMA.

Usage: contract.py DOCS_CLI_MD NAME=BINARY...   (NAME: lat, bw, coll, kv, accept, ep, congest, info)

- every spelling in docs/cli.md's table is in --help-all of each binary its row names;
- --help and --help-all: no line past 100 columns, no CLI11 type strings; lat/bw --help under
  70 lines, and --help-all lists the perftest compatibility flags --help leaves out;
- -V/--version prints one line and exits 0 in every binary;
- each bad input of BAD gets exactly one line on stderr, naming the flag, and exit status 2.
  Usage errors are found before any device is opened: on a host without RDMA a check that came
  after opening one would read "no RDMA device" and exit 1;
- the exit-status rule (harness::run_main): every --help ends with it, and each case of
  EXIT_RULE (a bad launch environment or token file: 2; a device that is not there: 1) gets one
  line on stderr and its status, the same in every binary.
"""
import json
import re
import subprocess
import sys
import tempfile
import os

ALL = ["lat", "bw", "coll", "kv", "accept", "ep", "congest"]
# Binaries that are not benchmarks: docs/cli.md's "all" does not name them, rows name them.
OTHERS = ["info"]

# (binary, arguments, text the one line must contain)
BAD = [
    ("ep", ["--plan", "--model", "gpt-5"], "--model gpt-5: unknown model \"gpt-5\""),
    ("ep", ["--plan", "--mode", "turbo"], "--mode turbo: unknown mode \"turbo\" (normal or low-latency)"),
    ("ep", ["--plan", "--skew", "hot-rank:0.5"], "--skew hot-rank:0.5: R must be at least 1"),
    ("ep", ["--plan", "--tokens", "0"], "--tokens must be from 1 to 1048576 (got 0)"),
    ("ep", ["--plan", "--model", "mixtral-8x7b", "--ep", "16"], "8 experts cannot be placed on 16 ranks"),
    ("ep", ["--plan", "--dtype", "fp4"], "--dtype fp4: unknown dispatch dtype \"fp4\" (bf16 or fp8)"),
    ("ep", ["--plan-copies"], "--plan-copies goes with --plan"),
    ("ep", ["--plan", "--reference"], "--reference does not apply to --plan"),
    ("congest", ["--pattern", "storm"], "--pattern: unknown congestor pattern \"storm\""),
    ("congest", ["--congestors", "1.5"], "--congestors 1.5: a fraction of the ranks, between 0 and 1"),
    ("congest", ["--pattern", "all-to-all", "--ratio", "4:1"], "--ratio goes with incast and put-incast, not all-to-all"),
    ("congest", ["--test", "jitter"], "unknown victim test \"jitter\" (latency, bandwidth, allreduce)"),
    ("congest", ["--congestor-size", "0"], "--congestor-size 0: from 1 to 64M"),
    ("accept", ["--plan", "--nodes", "4", "--max-p99-us", "5"], "--max-p99-us does not apply to --plan"),
    ("accept", ["--plan", "--nodes", "4", "--min-bw-fraction", "0.5"], "--min-bw-fraction does not apply to --plan"),
    ("lat", ["--loopback", "--benchmark_format=xml"], "--benchmark_format xml: expected console, json or csv"),
    ("bw", ["--benchmark_out_format=yaml"], "--benchmark_out_format yaml"),
    ("lat", ["-q", "2", "hostB"], "unknown flag -q"),
    ("lat", ["--no-such-flag=3", "hostB"], "unknown flag --no-such-flag"),
    ("lat", ["hostA", "hostB"], "unexpected argument 'hostB'"),
    ("lat", ["--max-mem", "5X"], "--max-mem: '5X': unknown unit 'X'"),
    ("lat", ["-s", "2,,4", "--loopback"], "-s 2,,4: an empty size in the list"),
    ("lat", ["-s", "99999999999999999999", "--loopback"], "-s: '99999999999999999999' is too large"),
    ("bw", ["-s", "0", "--loopback"], "-s 0: message size 0 is not measurable"),
    ("lat", ["-A", "FETCH_AND_ADD", "--op", "read", "--loopback"], "-A FETCH_AND_ADD and --op read contradict"),
    ("lat", ["-A", "ADD", "--loopback"], "-A ADD: expected FETCH_AND_ADD or CMP_AND_SWAP"),
    ("lat", ["--op", "nope", "--loopback"], "--op nope: unknown operation (write, send, read"),
    ("bw", ["-c", "XX", "--loopback"], "-c XX: unknown transport (RC, UC or UD)"),
    ("lat", ["--clock", "sundial", "--loopback"], "--clock sundial"),
    ("lat", ["-u", "32"], "-u must be from 0 to 31 (got 32)"),
    ("bw", ["-q", "0"], "-q must be from 1 to 1024 (got 0)"),
    ("bw", ["--qp", "2000"], "-q must be from 1 to 1024 (got 2000)"),
    ("bw", ["-n", "abc"], "-n: 'abc' is not a whole number"),
    ("bw", ["-w", "-1"], "-w must be at least 0 (got -1)"),
    ("lat", ["--timeout", "0"], "--timeout must be more than 0 seconds (got 0)"),
    ("bw", ["-m", "3000", "--loopback"], "-m 3000: MTU must be 256, 512, 1024, 2048 or 4096"),
    ("bw", ["--odp"], "--odp: on-demand paging is not supported yet"),
    ("kv", ["--plan", "--merge", "maybe"], "--merge does not apply to --plan"),
    ("kv", ["--plan", "--signal", "0"], "--signal does not apply to --plan"),
    ("kv", ["--merge", "maybe"], "--merge takes on or off (got maybe)"),
    ("kv", ["--signal", "0"], "--signal must be from 1 to 4096 (got 0)"),
    ("kv", ["--plan", "--model", "llama-3.1-70b", "--prefill-tp", "12"],
     "prefill TP 12 is not a multiple of the model's 8 KV heads"),
    ("kv", ["--plan", "--dtype", "int4"], "--dtype int4: unknown dtype \"int4\" (bf16, fp16 or f16"),
    ("kv", ["--plan", "--model", "nope"], "--model nope"),
    ("kv", ["--plan", "--layout", "diagonal"], "--layout does not apply to --plan"),
    ("kv", ["--layout", "diagonal"], "--layout diagonal: unknown layout \"diagonal\" (contiguous, layer, block)"),
    ("kv", ["--json", "out.json"], "--json goes with --plan"),
    ("kv", ["-b", "1K"], "-b goes with --wr-sweep"),
    ("kv", ["-q", "0", "--plan"], "-q must be from 1 to 64 (got 0)"),
    ("kv", ["--wr-cost-ns", "-5", "--plan"], "--wr-cost-ns must be at least 0 (got -5)"),
    ("kv", ["-u", "32"], "-u must be from 0 to 31 (got 32)"),
    ("accept", ["--plan", "--nodes", "4", "--junit", "x.xml"], "--junit describes a run's pairs"),
    ("accept", ["--plan", "--nodes", "20", "--rounds", "0"], "--rounds 0: expected a number of rounds"),
    ("accept", ["--rounds", "all"], "--rounds goes with --plan"),
    ("accept", ["--plan"], "--plan needs --nodes N"),
    ("accept", ["--schedule", "nope", "--plan", "--nodes", "4"], "--schedule takes round-robin or bisection"),
    ("accept", ["-s", "99999999999999999999"], "-s: '99999999999999999999' is too large"),
    ("accept", ["--port", "5"], "unknown flag --port"),
    ("accept", ["-q", "65"], "--qps must be from 1 to 64 (got 65)"),
    ("coll", ["-s", "2,,4"], "-s 2,,4: an empty size in the list"),
    ("coll", ["-s", "99999999999999999999"], "-s: '99999999999999999999' is too large"),
    ("coll", ["-b", "4M", "-e", "1K"], "-b 4M -e 1K: need 0 < -b <= -e"),
    ("coll", ["-q", "2"], "unknown flag -q"),
    ("coll", ["--dtype", "fp8"], "--dtype fp8: unknown value 'fp8' (f32 (fp32), bf16, f16 (fp16))"),
    ("coll", ["--coll", "nope"], "--coll nope: unknown value 'nope' (allreduce, allgather, reducescatter, alltoall)"),
    ("coll", ["--alpha-us", "-5"], "--alpha-us must be at least 0 (got -5)"),
    ("coll", ["--transport", "ib"], "--transport ib: expected rdma or shm"),
    ("coll", ["--compute", "half"], "--compute half: expected full or none"),
    ("coll", ["--reduce-threads", "0"], "--reduce-threads"),
    ("coll", ["-u", "32"], "-u must be from 0 to 31 (got 32)"),
    ("coll", ["--benchmark_format=xml"], "--benchmark_format xml"),
    ("info", ["--sysfs-root", "/nonexistent/fabench-root"], "--sysfs-root /nonexistent/fabench-root: not a directory"),
    ("info", ["-d", "mlx5_0"], "unknown flag -d"),
]

# The exit-status rule, by the exception's type and never by the phase it came in: (binary,
# arguments, environment, exit status, text the one line must contain).
BAD_LAUNCH = {"RANK": "3", "WORLD_SIZE": "2"}
NO_DEVICE = ["-d", "fabench-no-such-device", "--timeout", "5"]
EXIT_RULE = [
    ("coll", [], BAD_LAUNCH, 2, "RANK=3 is out of range for WORLD_SIZE=2"),
    ("kv", [], BAD_LAUNCH, 2, "RANK=3 is out of range for WORLD_SIZE=2"),
    ("accept", [], BAD_LAUNCH, 2, "RANK=3 is out of range for WORLD_SIZE=2"),
    ("lat", ["--loopback", "--token-file", "/nonexistent/fabench-token"], {}, 2, "--token-file /nonexistent"),
    ("lat", ["--loopback"] + NO_DEVICE, {}, 1, ""),
    ("bw", ["--loopback"] + NO_DEVICE, {}, 1, ""),
    ("coll", NO_DEVICE, {}, 1, ""),
    # a launch that does not fit is bad input, also when it is found after the flags were read
    ("kv", NO_DEVICE, {}, 2, "need 2 ranks, but 1 was launched"),
    ("accept", NO_DEVICE, {}, 2, "needs at least 2 ranks, but 1 was launched"),
]
EXIT_HELP = "Exit status: 0 when"

TYPE_STRINGS = re.compile(r"\b(UINT|INT|FLOAT|TEXT)\b|:\{|not in range")


def run(binary, args, cwd, env=None):
    return subprocess.run([binary] + args, capture_output=True, text=True, timeout=30, cwd=cwd,
                          env=dict(os.environ, FABENCH_TOKEN="", **(env or {})))


def table_rows(path):
    rows = []
    for line in open(path, encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or cells[0] in ("Concept", "---") or not line.startswith("|"):
            continue
        spellings = [s for s in re.findall(r"`([^`]+)`", cells[1]) if s.startswith("-")]
        names = ALL if cells[2] == "all" else [b.strip() for b in cells[2].split(",")]
        rows.append((cells[0], spellings, names))
    return rows


def flag_tokens(help_text):
    # "-q,--qps N" and "  --qp N": every -x / --long-name at the start of an option line.
    tokens = set()
    for line in help_text.splitlines():
        m = re.match(r"\s+(-[^\s]+)", line)
        if m:
            tokens.update(t for t in m.group(1).split(",") if t.startswith("-"))
    return tokens


def main():
    docs = sys.argv[1]
    binaries = {n: os.path.abspath(b) for n, b in (a.split("=", 1) for a in sys.argv[2:])}
    failures = []
    fail = failures.append
    cwd = tempfile.mkdtemp(prefix="fabench-cli-")
    helps = {}
    for name, binary in binaries.items():
        short, full = run(binary, ["--help"], cwd), run(binary, ["--help-all"], cwd)
        if short.returncode != 0 or full.returncode != 0:
            fail(f"{name}: --help/--help-all exit {short.returncode}/{full.returncode}")
        helps[name] = full.stdout
        for which, text in (("--help", short.stdout), ("--help-all", full.stdout)):
            if EXIT_HELP not in text:
                fail(f"{name} {which}: no exit-status epilogue ({EXIT_HELP!r})")
        for which, text in (("--help", short.stdout), ("--help-all", full.stdout)):
            for line in text.splitlines():
                if len(line) > 100:
                    fail(f"{name} {which}: a line of {len(line)} columns: {line[:60]}...")
                if TYPE_STRINGS.search(line):
                    fail(f"{name} {which}: a CLI11 type string: {line.strip()}")
        if name in ("lat", "bw"):
            lines = len(short.stdout.splitlines())
            if lines >= 70:
                fail(f"{name} --help: {lines} lines (want under 70)")
            if "--use_hugepages" in short.stdout or "--use_hugepages" not in full.stdout:
                fail(f"{name}: perftest's flags belong to --help-all, not --help")
        if name in ("lat", "bw", "coll", "kv"):
            lineage = "perftest" if name in ("lat", "bw") else "nccl-tests"
            if lineage not in short.stdout:
                fail(f"{name} --help: does not say -b/-e follow {lineage}")
        version = run(binary, ["--version"], cwd)
        short_v = run(binary, ["-V"], cwd)
        if version.returncode != 0 or len(version.stdout.splitlines()) != 1 or short_v.stdout != version.stdout:
            fail(f"{name}: --version/-V: exit {version.returncode}, output {version.stdout!r} / {short_v.stdout!r}")

    rows = table_rows(docs)
    if len(rows) < 20:
        fail(f"{docs}: {len(rows)} table rows found; the table did not parse")
    for concept, spellings, names in rows:
        for name in names:
            if name not in ALL + OTHERS:
                fail(f"{docs}: row {concept!r} names an unknown binary {name!r}")
                continue
            if name not in helps:
                continue
            have = flag_tokens(helps[name])
            for s in spellings:
                if s not in have:
                    fail(f"fabench-{name}: {concept}: {s} is not in --help-all (docs/cli.md says it is)")

    cases = [(n, a, {}, 2, w) for n, a, w in BAD] + EXIT_RULE
    for name, args, env, status, want in cases:
        if name not in binaries:
            continue
        r = run(binaries[name], args, cwd, env)
        lines = r.stderr.splitlines()
        shown = " ".join([f"{k}={v}" for k, v in env.items()] + [f"fabench-{name}"] + args)
        if r.returncode != status:
            fail(f"{shown}: exit {r.returncode} (want {status}); stderr {r.stderr.strip()!r}")
        if len(lines) != 1:
            fail(f"{shown}: {len(lines)} lines on stderr (want 1): {r.stderr.strip()!r}")
        elif not lines[0].startswith(f"fabench-{name}: error: ") or want not in lines[0]:
            fail(f"{shown}: {lines[0]!r} does not contain {want!r}")

    # --plan --json FILE writes the plan there (kv: JSON array; accept: the schedule).
    for name, args in (("kv", ["--plan", "--json"]), ("accept", ["--plan", "--nodes", "20", "--json"])):
        if name not in binaries:
            continue
        path = os.path.join(cwd, f"{name}-plan.json")
        r = run(binaries[name], args + [path], cwd)
        if r.returncode != 0 or not os.path.exists(path) or os.path.getsize(path) == 0:
            fail(f"fabench-{name} {' '.join(args)} FILE: exit {r.returncode}, nothing written ({r.stderr.strip()!r})")

    # fabench-info --json FILE writes the record (an empty one for an empty --sysfs-root).
    if "info" in binaries:
        path, root = os.path.join(cwd, "info.json"), tempfile.mkdtemp(prefix="fabench-sysfs-")
        r = run(binaries["info"], ["--sysfs-root", root, "--json", path], cwd)
        try:
            doc = json.load(open(path, encoding="utf-8")) if r.returncode == 0 else {}
        except (OSError, ValueError) as e:
            doc = {"error": str(e)}
        if doc.get("devices") != [] or "mlperf" not in doc or "fabench" not in doc.get("software", {}):
            fail(f"fabench-info --json FILE: exit {r.returncode}, {doc!r} ({r.stderr.strip()!r})")
        # nvidia-smi's matrix is added where it is installed, for this host only (not --sysfs-root).
        fake = os.path.join(cwd, "fakebin")
        os.makedirs(fake, exist_ok=True)
        with open(os.path.join(fake, "nvidia-smi"), "w", encoding="utf-8") as f:
            f.write('#!/bin/sh\n[ "$1 $2" = "topo -m" ] || exit 3\necho "GPU0 X PIX"\n')
        os.chmod(os.path.join(fake, "nvidia-smi"), 0o755)
        env = {"PATH": fake + os.pathsep + os.environ.get("PATH", "")}
        mine = run(binaries["info"], ["--json"], cwd, env)
        other = run(binaries["info"], ["--sysfs-root", root, "--json"], cwd, env)
        try:
            topo, other_doc = json.loads(mine.stdout).get("nvidia_smi_topo"), json.loads(other.stdout)
        except ValueError as e:
            topo, other_doc = str(e), {}
        if topo != "GPU0 X PIX\n" or "nvidia_smi_topo" in other_doc:
            fail(f"fabench-info --json with nvidia-smi installed: {topo!r}, --sysfs-root: {other_doc!r}")

    for f in failures:
        print("FAIL:", f)
    checked = len(cases) + sum(len(s) * len(n) for _, s, n in rows)
    print(f"{len(failures)} failure(s) in {checked} checks over {', '.join(binaries)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
