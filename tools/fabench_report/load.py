"""load: fabench's JSON files read (Google Benchmark output through gbjson, or a fabench-accept
report) and grouped into runs: files of the same binary whose benchmarks do not overlap
(bw.json + bibw.json) form one run; a file that repeats benchmarks of an earlier one starts
a new run."""

import os

from . import gbjson
from .accept import AcceptFile, json_hook
from .names import InputError, classify

# A file is fabench's when its context has one of these.
_FABENCH_KEYS = ("fabench_version", "device", "port_rate_Gbps")


class RunFile:
    def __init__(self, path, doc):
        self.path = path
        self.name = os.path.basename(path)
        self.context = doc["context"]
        exe = str(self.context.get("executable", ""))
        self.binary = os.path.basename(exe) if exe else "unknown binary"
        try:
            gbjson.check(path, doc)
        except gbjson.GBJsonError as e:
            raise InputError(f"{path}: not a fabench run ({str(e)[len(path) + 2:]})") from None
        self.benches = gbjson.benchmarks(doc)
        self.kind = classify(self.binary, self.benches)
        self.run = None  # set when grouped

    @property
    def keys(self):
        return {b.key for b in self.benches}


def load_file(path):
    """A RunFile or an AcceptFile; InputError (one line) for anything else."""
    try:
        doc = gbjson.read_json(path, object_hook=json_hook)
    except gbjson.GBJsonError as e:
        raise InputError(str(e)) from None
    if isinstance(doc, dict) and "fabench_accept" in doc:
        return AcceptFile(path, doc)
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list) or not isinstance(
            doc.get("context"), dict):
        raise InputError(f"{path}: not a fabench run (JSON, but not Google Benchmark output: "
                         "no \"context\" object and \"benchmarks\" list)")
    ctx = doc["context"]
    if not any(k in ctx for k in _FABENCH_KEYS):
        exe = ctx.get("executable", "an unknown binary")
        raise InputError(f"{path}: not a fabench run (Google Benchmark output of {exe}, but its context "
                         f"has none of fabench's keys: {', '.join(_FABENCH_KEYS)})")
    return RunFile(path, doc)


class Run:
    def __init__(self, kind, index):
        self.kind = kind
        self.index = index
        self.label = f"run {index}"
        self.files = []
        self.benches = {}

    @property
    def context(self):
        return self.files[0].context

    def add(self, rf):
        self.files.append(rf)
        rf.run = self
        for b in rf.benches:
            self.benches[b.key] = b


def group_runs(files):
    """{kind: [Run]} in order of first appearance. A file joins the kind's last
    run when no benchmark repeats (bw.json + bibw.json), else starts a new one."""
    kinds = {}
    for rf in files:
        runs = kinds.setdefault(rf.kind, [])
        if runs and not (runs[-1].benches.keys() & rf.keys):
            runs[-1].add(rf)
        else:
            run = Run(rf.kind, len(runs) + 1)
            run.add(rf)
            runs.append(run)
    return kinds

