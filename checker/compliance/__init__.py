"""The compliance tests, one module each: what the test verifies, re-done on the submitted files, its screens and
its ``audit.config`` facts. The findings they feed are :mod:`checker.checks.compliance` and
:mod:`checker.checks.compliance_logs` (the ``COMPL-*`` rules).

- :mod:`checker.compliance.test06`: TEST06 (LLM output consistency) from its accuracy log, and the screens that pass
  a log of LoadGen's exact layout without decoding a token;
- :mod:`checker.compliance.test07`: TEST07 (accuracy in performance mode) from ``verify_accuracy.txt``;
- :mod:`checker.compliance.test09`: TEST09 (mean output length) from its accuracy log;
- :mod:`checker.compliance.audit_run`: what the TEST07/TEST09 performance run's detail log shows about the test's
  ``audit.config``.
"""
