"""Self-contained HTML reports (``--html FILE``): one page per run, check, sweep, table or claim.

Building blocks (escaping, the page, SVG plots) and the check, table and claim pages live here; the run and
sweep pages are in :mod:`loadgen_sut.report` (the checker never imports the harness). Every page is one file
with its CSS and SVG plots inline, no script and nothing loaded at view time; it is written through
:mod:`checker.report.output` like every other report.
"""
