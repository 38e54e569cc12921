"""python3 -m fabench_report: the same as tools/fabench-report."""

from .cli import run

run()
