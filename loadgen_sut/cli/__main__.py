"""``python -m loadgen_sut.cli COMMAND ...``: the ``inference-audit`` command without its console script."""

import sys

from loadgen_sut.cli import main

sys.exit(main())
