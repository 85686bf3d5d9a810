"""``inference-audit claim``: resolve a performance claim's results (table rows, peer-tool runs) and judge it
against the MLPerf results-messaging rules; the footnote it must carry is :mod:`.citation` (:mod:`.cli` is the
subcommand)."""
