#!/usr/bin/env bash
# The client-workers ladder on the device machine's 16 cores, as one device `run` call (no GPU is used):
#
#   command: bash bench/device/workers_ladder.sh     carry: ["bench/device/wheels"]     timeout_s: 540
#
# It installs the project's dependencies offline from the carried wheels where they do not import (as
# gpu_smoke.sh; bench/device/fetch_wheels.sh fills the folder here), then runs bench/device/workers_ladder.py:
# local token servers, and for 1, 2, 4, 8 and 14 client workers a Server ladder to 5,000 req/s, each climbed to
# the rate where it saturates. Budget: TOTAL_S (default 450 s) for the ladder, under 8 minutes with the install.
# $OUT receives workers_ladder.json and ladder.log.
#
# Here, at a tiny scale (the test of this script):  QUICK=1 OUT=/tmp/ladder bash bench/device/workers_ladder.sh
# (LADDER_ARGS: more options of workers_ladder.py, e.g. LADDER_ARGS="--workers 1,2 --rates 100")
set -uo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
cd "$REPO" || exit 2
OUT=${OUT:-$REPO/out/workers_ladder}
WORK=${WORK:-/tmp/workers_ladder_work}
WHEELS=${WHEELS:-$REPO/bench/device/wheels}
PY=${PY:-python3}
TOTAL_S=${TOTAL_S:-450}
QUICK=${QUICK:-}
export PYTHONUNBUFFERED=1
export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$OUT" "$WORK"
exec > >(tee -a "$OUT/ladder.log") 2>&1
tee_pid=$!
trap 'exec 1>&- 2>&-; wait "$tee_pid"' EXIT
echo "workers_ladder: $(date -u +%FT%TZ) $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"

if ! "$PY" bench/device/requirements.py --check; then
    if [[ ! -d $WHEELS ]]; then
        echo "workers_ladder: the project's dependencies are missing and $WHEELS does not exist:" \
             "run bench/device/fetch_wheels.sh here and carry bench/device/wheels"
        exit 3
    fi
    mapfile -t reqs < <("$PY" bench/device/requirements.py)
    timeout 180 "$PY" -m pip install -q --no-index --no-cache-dir --find-links "$WHEELS" "${reqs[@]}" || {
        echo "workers_ladder: stopping: the offline install failed"
        exit 3
    }
fi
"$PY" -c "import mlperf_loadgen, loadgen_sut.client_workers" || { echo "workers_ladder: the harness does not import"; exit 3; }

args=(--out "$WORK" --total-s "$TOTAL_S")
[[ -n $QUICK ]] && args+=(--quick)
# shellcheck disable=SC2206  # LADDER_ARGS: extra options of workers_ladder.py, split on spaces
[[ -n ${LADDER_ARGS:-} ]] && args+=($LADDER_ARGS)
timeout -k 10 $((TOTAL_S + 60)) "$PY" bench/device/workers_ladder.py "${args[@]}"
rc=$?
cp "$WORK/workers_ladder.json" "$OUT/" 2>/dev/null
echo "workers_ladder: exit $rc"
exit $rc
