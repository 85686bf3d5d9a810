"""``inference-audit table``: read a published results table, check each row against the round's rules
(``TABLE-*``) and, with ``--tree``, re-derive it from the submission's logs (:mod:`.cli` is the subcommand)."""
