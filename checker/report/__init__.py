"""Reports of a checker run: terminal, JSON, official summary CSV, JUnit XML.

Every writer reads the same :class:`checker.results.CheckReport` (after ``--select`` /
``--ignore`` were applied with :func:`checker.report.outcome.filter_report`), so the exit code
and every report agree.
"""
