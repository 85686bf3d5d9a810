#!/usr/bin/env bash
# Download, into bench/device/wheels/, the wheels that inference-audit needs on the H200 device machine
# and that its image lacks (or may hold too old). Run HERE (it needs PyPI); the folder is .gitignore'd and
# travels with a device `run` through `carry: ["bench/device/wheels"]`.
#
#   bash bench/device/fetch_wheels.sh              # cp312 manylinux x86_64 (the device image: Python 3.12)
#   PYVER=3.11 WHEELS=/tmp/w311 bash bench/device/fetch_wheels.sh   # the same set for a local 3.11 test
#
# Not fetched (the device image has them, per /work/.library/device/KINDS.md): torch, transformers,
# tokenizers, numpy, scipy, pandas, sympy/mpmath, uvloop and pandas' own dependencies. The device script
# (gpu_smoke.sh) checks those imports and says which one is missing.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
PYVER=${PYVER:-3.12}
WHEELS=${WHEELS:-$REPO/bench/device/wheels}
PY=${PY:-python3}
ABI="cp${PYVER/./}"
# pyproject.toml's runtime dependencies less those the image carries, LoadGen pinned to the wheels' series
# (bench/device/requirements.py: the one list gpu_smoke.sh and workers_ladder.sh install from on the device)
mapfile -t REQS < <("$PY" "$REPO/bench/device/requirements.py" --fetch)
# present in the image: dropped after the resolver has pulled them in
SKIP_RE='^(numpy|scipy|pandas|sympy|mpmath|uvloop|python_dateutil|pytz|tzdata|torch|transformers|tokenizers)-'
PLATFORMS=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64
           --platform manylinux2014_x86_64 --platform manylinux1_x86_64)

rm -rf "$WHEELS"
mkdir -p "$WHEELS"
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT

# 1. rouge-score is published as an sdist only: build its pure-Python wheel here (into a side folder,
#    so that step 2 picks one file per package)
mkdir -p "$src/sdist" "$src/built"
"$PY" -m pip download -q --no-deps --no-binary=:all: -d "$src/sdist" "rouge-score>=0.1.2"
"$PY" -m pip wheel -q --no-deps -w "$src/built" "$src"/sdist/*.tar.gz

# 2. everything as binary wheels for the target interpreter, resolved with their dependencies
"$PY" -m pip download -q --only-binary=:all: --python-version "$PYVER" --implementation cp --abi "$ABI" \
    "${PLATFORMS[@]}" --find-links "$src/built" -d "$WHEELS" "${REQS[@]}"

# 3. drop what the image already has
for f in "$WHEELS"/*.whl; do
    if [[ $(basename "$f") =~ $SKIP_RE ]]; then rm -f "$f"; fi
done

ls -1 "$WHEELS"
wheels_b=$(du -cb "$WHEELS"/*.whl | tail -1 | cut -f1)
tree_b=$(cd "$REPO" && git ls-files -z --cached --others --exclude-standard | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
echo "wheels: $(ls "$WHEELS"/*.whl | wc -l) files, $((wheels_b / 1024)) KiB in $WHEELS"
echo "working tree that travels (tracked + untracked, not ignored): $((tree_b / 1024)) KiB"
echo "together: $(((wheels_b + tree_b) / 1048576)) MiB of the device's 64 MiB carry limit"
if (( wheels_b + tree_b > 48 * 1048576 )); then
    echo "WARNING: over 48 MiB together; the device run may be refused (limit 64 MiB)" >&2
fi
