"""The HTML pages of runs and sweeps (``inference-audit report``, ``run --html``).

:mod:`~loadgen_sut.report.run_data` reads a run directory into typed records, :mod:`~loadgen_sut.report.explain`
says in plain words why a run is not VALID, :mod:`~loadgen_sut.report.early_stopping` is LoadGen's
early-stopping rule as arithmetic, :mod:`~loadgen_sut.report.client_view` sets each test's client
self-diagnostics beside the CLIENT-BOUND thresholds (and :mod:`~loadgen_sut.report.client_section` draws them),
:mod:`~loadgen_sut.report.run_page` draws the page with the building blocks of :mod:`checker.report.html`.
"""
