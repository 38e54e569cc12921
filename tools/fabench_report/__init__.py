"""fabench-report: one offline HTML page (and optionally PNG/SVG files) from fabench's JSON
(fabench-lat, -bw, -coll, -kv: Google Benchmark JSON; fabench-accept: its report).

    fabench-report RUN.json [RUN2.json ...] -o report.html [--png DIR] [--svg DIR]
                   [--structure FILE.json]

Files of the same binary whose benchmarks do not overlap (bw.json + bibw.json) form one run; a
file that repeats benchmarks of an earlier one starts a new run, and runs of the same binary
are compared against the first (overlaid curves and a ratio plot; a warning on stderr and a
banner on the page when they differ in device, link rate, transport or host). Plots are drawn
by matplotlib as SVG and inlined into the page with a <title> (hover tooltip) on every point:
the page fetches nothing.

Exit status: 0 report written, 2 bad input or usage, 1 anything else (one line on stderr, never
a traceback; FABENCH_REPORT_DEBUG=1 shows it).

Modules, data flowing down:
  cli            arguments, what is written, stderr, exit status
  page           the HTML page;  accept_html, accept_image: fabench-accept's section
  render         matplotlib SVG/PNG of a plot
  report         the sections of a report
  lat bw coll kv generic comparison    one per family of benchmarks (and the comparison)
  model          sections, plots, series, y ticks; accept: fabench-accept's model
  load           files read and grouped into runs
  gbjson         Google Benchmark JSON (also read by bench/compare and the tests)
  names fmt version
Importing the package imports none of them (gbjson stays light for its other readers).
"""
