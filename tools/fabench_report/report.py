"""report: the whole report: a section per binary (its family's layout, or the generic one), a
comparison section where a binary has several runs, and the fabench-accept sections."""

from .accept import ACCEPT_TABLE_MAX_N, AcceptSection
from .bw import bw_section
from .coll import coll_section
from .comparison import compare_section
from .congest import congest_section
from .ep import ep_section
from .generic import generic_section
from .kv import kv_section
from .lat import lat_section
from .load import group_runs
from .names import PROG, slug

SECTION_OF = {"lat": lat_section, "bw": bw_section, "coll": coll_section, "kv": kv_section, "ep": ep_section,
              "congest": congest_section}
KIND_TITLE = {"lat": "Latency", "bw": "Bandwidth and message rate", "coll": "Collectives",
              "kv": "KV-cache transfers", "ep": "Expert parallelism: MoE dispatch and combine",
              "congest": "Congestion impact"}


class Report:
    def __init__(self, files, accepts=(), accept_table_max=None):
        self.files = files
        self.accept = []
        table_max = ACCEPT_TABLE_MAX_N if accept_table_max is None else accept_table_max
        for i, f in enumerate(accepts):
            self.accept.append(AcceptSection(f, "accept" if i == 0 else f"accept-{i + 1}", table_max))
        self.kinds = group_runs(files)
        self.notes = []
        self.sections = []
        binaries = list(dict.fromkeys(f.binary for f in files))
        if len(self.kinds) > 1:
            self.notes.append(
                f"These files come from different binaries ({', '.join(binaries)}): each has its own section, "
                "and only runs of the same binary are compared.")
        for kind, runs in self.kinds.items():
            binary = runs[0].files[0].binary
            files_text = "; ".join(f"{r.label} = {' + '.join(f.name for f in r.files)}" for r in runs)
            title = f"{KIND_TITLE.get(kind, kind)} ({binary})"
            make = SECTION_OF.get(kind)
            sec = make(runs, kind, title) if make else generic_section(runs, slug(kind), title, kind)
            sec.notes.insert(0, files_text)
            if not any(r.benches for r in runs):
                sec.notes.append("no benchmarks in this run")
            if not make:
                sec.notes.append(f"{binary}: no dedicated layout yet; rate counters plotted per layout "
                                 "(the name without its size)")
            self.sections.append(sec)
            if len(runs) > 1:
                self.sections.append(compare_section(runs, f"cmp-{slug(kind)}",
                                                     f"Comparison: {binary}, runs against {runs[0].label}",
                                                     kind, binary))
        n_failed = sum(1 for f in files for b in f.benches if b.errors)
        if n_failed:
            self.notes.append(f"{n_failed} benchmark(s) failed: shown as failed (red × on the size axis, "
                              "and listed in their section)")

    @property
    def plots(self):
        return [p for s in self.sections for p in s.plots]

    def structure(self):
        return {
            "tool": PROG,
            "files": [{"file": f.name, "binary": f.binary, "kind": f.kind, "run": f.run.label,
                       "benchmarks": len(f.benches), "failed": sum(1 for b in f.benches if b.errors)}
                      for f in self.files],
            "notes": self.notes,
            "sections": [s.structure() for s in self.sections] + [s.structure() for s in self.accept],
        }

    def mismatches(self):
        """[(section, run label, its files, first run's label and files, diffs)] of every
        comparison across different fabrics."""
        out = []
        for sec in self.sections:
            runs = {r.label: r for r in sec.runs}
            first = sec.runs[0]
            for label, diffs in sec.mismatch:
                if diffs:
                    out.append((sec, label, runs[label].files, first, diffs))
        return out
