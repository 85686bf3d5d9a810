#!/usr/bin/env bash
# GPU smoke run: a random-weight Llama (~1 B parameters, bf16) through `inference-audit run --engine
# transformers`, one short Offline and one short Server performance trial under the real LoadGen, and
# TTFT/TPOT/tokens-per-second in $OUT/gpu_smoke.json. Made for the H200 device tool (one `run` call):
#
#   command: bash bench/device/gpu_smoke.sh     carry: ["bench/device/wheels"]     timeout_s: 480
#
# (bench/device/fetch_wheels.sh fills bench/device/wheels beforehand, here, where PyPI is reachable.)
# Nothing is downloaded: the wheels are installed offline, the tokenizer is trained from the standard
# library's sources and the weights are random. Every step has a timeout and the whole script a
# deadline (TOTAL_S), so it ends inside the device tool's 10-minute command limit with what it has.
#
# $OUT receives at most 7 flat files: gpu_smoke.json, {offline,server}-run-record.json,
# {offline,server}-mlperf_log_summary.txt, nvidia-smi.txt and smoke.log (this script's whole output).
#
# Settings (environment); the CPU test of the script:
#   DEVICE=cpu OUT=/tmp/gpusmoke bash bench/device/gpu_smoke.sh     (MODEL_SIZE tiny, shorter runs)
# gpt-oss-120b's architecture instead (a random GptOssForCausalLM, mixture of experts; harmony special tokens;
# the round's sampling, temperature 1, applied by the engine), on the GPU and in the CPU test:
#   BENCHMARK=gpt-oss-120b bash bench/device/gpu_smoke.sh           (ARCH gpt-oss follows, MODEL_SIZE 0.5b)
#   DEVICE=cpu BENCHMARK=gpt-oss-120b OUT=/tmp/gpusmoke-oss bash bench/device/gpu_smoke.sh
set -uo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
cd "$REPO" || exit 2
DEVICE=${DEVICE:-cuda}
BENCHMARK=${BENCHMARK:-llama3.1-8b}
# the model's architecture (bench/device/build_model.py --arch): gpt-oss for gpt-oss-120b, else llama
[[ $BENCHMARK == gpt-oss-120b ]] && d_arch=gpt-oss || d_arch=llama
ARCH=${ARCH:-$d_arch}
if [[ $DEVICE == cpu ]]; then
    # the CPU test: a tiny model, short runs, fewer tokens and a smaller batch
    d_size=tiny d_dtype=float32 d_off_s=8 d_srv_s=8 d_mnt=16 d_batch=8
elif [[ $ARCH == gpt-oss ]]; then
    d_size=0.5b d_dtype=bfloat16 d_off_s=15 d_srv_s=30 d_mnt=64 d_batch=64
else
    d_size=1b d_dtype=bfloat16 d_off_s=15 d_srv_s=30 d_mnt=64 d_batch=64
fi
OUT=${OUT:-$REPO/out/gpu_smoke}
WORK=${WORK:-/tmp/gpu_smoke_work}
MODEL_DIR=${MODEL_DIR:-$WORK/model}
MODEL_SIZE=${MODEL_SIZE:-$d_size}            # llama: tiny | 0.5b | 1b; gpt-oss: tiny | 0.5b (build_model.py)
DTYPE=${DTYPE:-$d_dtype}
WHEELS=${WHEELS:-$REPO/bench/device/wheels}
PY=${PY:-python3}
ROUND=${ROUND:-}                              # empty: the harness's default round
MAX_NEW_TOKENS=${MAX_NEW_TOKENS:-$d_mnt}
BATCH_SIZE=${BATCH_SIZE:-$d_batch}
# Offline expected QPS (LoadGen issues about QPS x OFFLINE_S x 1.1 samples at once); auto: OFFLINE_HEADROOM x
# the samples/s of a calibration run of CALIBRATION_BATCHES full batches, so that the run lasts its min_duration
OFFLINE_QPS=${OFFLINE_QPS:-auto}
OFFLINE_HEADROOM=${OFFLINE_HEADROOM:-2}
CALIBRATION_BATCHES=${CALIBRATION_BATCHES:-3}
OFFLINE_QPS_FALLBACK=${OFFLINE_QPS_FALLBACK:-20}
OFFLINE_S=${OFFLINE_S:-$d_off_s}              # Offline min_duration (s)
OFFLINE_MIN_QUERIES=${OFFLINE_MIN_QUERIES:-64}
SERVER_QPS=${SERVER_QPS:-auto}                # auto: SERVER_LOAD x the Offline run's samples/s
SERVER_LOAD=${SERVER_LOAD:-0.5}
SERVER_QPS_FALLBACK=${SERVER_QPS_FALLBACK:-4}
SERVER_S=${SERVER_S:-$d_srv_s}                # Server min_duration (s)
SERVER_MIN_QUERIES=${SERVER_MIN_QUERIES:-500} # LoadGen's early stopping needs >= 459 queries at p99
TOTAL_S=${TOTAL_S:-420}                       # deadline for the whole script (s)
# the image's packages that are checked, never carried; STOP_AFTER=install ends after the offline install
# (both for testing the install where torch is absent: IMAGE_PACKAGES="numpy pandas scipy" STOP_AFTER=install)
IMAGE_PACKAGES=${IMAGE_PACKAGES:-torch transformers tokenizers numpy pandas scipy}
STOP_AFTER=${STOP_AFTER:-}

export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$OUT" "$WORK"
rm -rf "$WORK/calibration" "$WORK/offline" "$WORK/server" "$WORK/steps.tsv"
exec > >(tee -a "$OUT/smoke.log") 2>&1
tee_pid=$!
trap 'exec 1>&- 2>&-; wait "$tee_pid"' EXIT  # smoke.log complete before the device tool collects $OUT
t_start=$SECONDS
echo "gpu_smoke: $(date -u +%FT%TZ) DEVICE=$DEVICE BENCHMARK=$BENCHMARK ARCH=$ARCH MODEL_SIZE=$MODEL_SIZE DTYPE=$DTYPE BATCH_SIZE=$BATCH_SIZE" \
     "MAX_NEW_TOKENS=$MAX_NEW_TOKENS OFFLINE_QPS=$OFFLINE_QPS/${OFFLINE_S}s SERVER_QPS=$SERVER_QPS/${SERVER_S}s" \
     "SERVER_MIN_QUERIES=$SERVER_MIN_QUERIES TOTAL_S=$TOTAL_S"

# step NAME CAP_S CMD...: run CMD with a timeout of min(CAP_S, time left before the deadline less 30 s
# for the report); record "name<TAB>exit status<TAB>seconds" in $WORK/steps.tsv; return the exit status
step() {
    local name=$1 cap=$2 t0=$SECONDS rc
    shift 2
    local left=$((TOTAL_S - (SECONDS - t_start) - 30))
    local limit=$((cap < left ? cap : left))
    if ((limit < 10)); then
        echo "== $name: skipped, ${left} s left before the deadline"
        printf '%s\t%d\t%d\n' "$name" 124 0 >>"$WORK/steps.tsv"
        return 124
    fi
    echo "== $name (timeout ${limit} s): $*"
    timeout -k 10 "$limit" "$@"
    rc=$?
    ((rc == 124 || rc == 137)) && echo "== $name: TIMED OUT after ${limit} s"
    printf '%s\t%d\t%d\n' "$name" "$rc" $((SECONDS - t0)) >>"$WORK/steps.tsv"
    echo "== $name: exit $rc after $((SECONDS - t0)) s"
    return $rc
}

# 1. the machine
if command -v nvidia-smi >/dev/null; then
    { nvidia-smi; nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv; } \
        >"$OUT/nvidia-smi.txt" 2>&1
    head -n 20 "$OUT/nvidia-smi.txt"
else
    echo "nvidia-smi not found (DEVICE=$DEVICE)" | tee "$OUT/nvidia-smi.txt"
fi

# 2. what the image must have (not carried): torch, transformers, tokenizers, numpy, pandas, scipy
if ! IMAGE_PACKAGES=$IMAGE_PACKAGES "$PY" - <<'EOF'
import importlib, os, sys
missing = []
for name in os.environ["IMAGE_PACKAGES"].split():
    try:
        mod = importlib.import_module(name)
        print(f"  {name} {getattr(mod, '__version__', '?')}")
    except Exception as exc:
        missing.append(f"{name} ({type(exc).__name__}: {exc})")
if missing:
    print("gpu_smoke: the image lacks " + ", ".join(missing) + "; these are not carried: add their cp312 wheels "
          "to bench/device/wheels (fetch_wheels.sh, SKIP_RE) or run where they are installed", file=sys.stderr)
    sys.exit(3)
print(f"  python {sys.version.split()[0]}")
if "torch" in sys.modules:
    import torch
    print(f"  cuda available: {torch.cuda.is_available()}, "
          f"device: {torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'none'}")
EOF
then
    echo "gpu_smoke: stopping: a package of the image is missing"
    exit 3
fi

# 3. the project's own dependencies, offline from the carried wheels (skipped where all are installed already)
if "$PY" bench/device/requirements.py --check; then
    echo "== install: not needed (every one of the project's dependencies is installed)"
    printf '%s\t%d\t%d\n' install 0 0 >>"$WORK/steps.tsv"
elif [[ ! -d $WHEELS ]]; then
    echo "gpu_smoke: the project's dependencies are missing and $WHEELS does not exist:" \
         "run bench/device/fetch_wheels.sh here and carry bench/device/wheels"
    exit 3
else
    # pyproject.toml's dependencies, LoadGen pinned to the 6.0.x series the wheels hold
    mapfile -t reqs < <("$PY" bench/device/requirements.py)
    step install 180 "$PY" -m pip install -q --no-index --no-cache-dir --find-links "$WHEELS" "${reqs[@]}" || {
        echo "gpu_smoke: stopping: the offline install failed"
        exit 3
    }
fi
# the harness imports with what is installed now (the runner pulls in every runtime dependency)
"$PY" -c "import mlperf_loadgen, loadgen_sut.runner, checker.engine; from importlib.metadata import version; \
print('  harness imports; mlcommons-loadgen', version('mlcommons-loadgen'), '| pydantic', version('pydantic'))" || {
    echo "gpu_smoke: stopping: the harness does not import"
    exit 3
}
if [[ $STOP_AFTER == install ]]; then
    echo "gpu_smoke: STOP_AFTER=install: stopping after the install"
    exit 0
fi

# 4. the model: byte-level BPE tokenizer trained here + random Llama or gpt-oss weights (a previous build is replaced)
[[ -f $MODEL_DIR/build.json ]] && rm -rf "$MODEL_DIR"
step build-model 240 "$PY" bench/device/build_model.py "$MODEL_DIR" --arch "$ARCH" --size "$MODEL_SIZE" \
    --device "$DEVICE" || {
    echo "gpu_smoke: stopping: the model could not be built"
    exit 3
}

run_args=(--engine transformers --model "$MODEL_DIR" --device "$DEVICE" --dtype "$DTYPE" --batch-size "$BATCH_SIZE"
          --benchmark "$BENCHMARK" --mode performance --dataset builtin --max-new-tokens "$MAX_NEW_TOKENS" --ignore-eos
          --progress-interval 10)
[[ -n $ROUND ]] && run_args+=(--round "$ROUND")

# One performance trial: STEP TIMEOUT_S SCENARIO DIR QPS MIN_DURATION_S MIN_QUERIES COMMENT; writes the trial's
# user.conf into $WORK/DIR and runs the harness there.
trial() {
    local name=$1 timeout_s=$2 scenario=$3 dir=$WORK/$4 qps=$5 duration_s=$6 min_queries=$7 comment=$8
    mkdir -p "$dir"
    cat >"$dir/user.conf" <<EOF
# gpu_smoke.sh: $comment
*.$scenario.target_qps = $qps
*.$scenario.min_duration = $((duration_s * 1000))
*.$scenario.min_query_count = $min_queries
EOF
    step "$name" "$timeout_s" "$PY" -m loadgen_sut.cli run "${run_args[@]}" --scenario "$scenario" \
        --user-conf "$dir/user.conf" --out "$dir"
}

# 5. Offline: calibrate the expected QPS (a few full batches), then the run itself
if [[ $OFFLINE_QPS == auto ]]; then
    trial offline-calibration 150 Offline calibration 1 0 $((CALIBRATION_BATCHES * BATCH_SIZE)) \
        "Offline calibration, $CALIBRATION_BATCHES batches of $BATCH_SIZE (sets the Offline run's expected QPS)"
    OFFLINE_QPS=$("$PY" bench/device/smoke_report.py --offline "$WORK/calibration" --suggest-qps "$OFFLINE_HEADROOM") \
        || OFFLINE_QPS=$OFFLINE_QPS_FALLBACK
    echo "== offline expected QPS: $OFFLINE_QPS ($OFFLINE_HEADROOM x the calibration's samples/s)"
fi
trial offline 180 Offline offline "$OFFLINE_QPS" "$OFFLINE_S" "$OFFLINE_MIN_QUERIES" \
    "a short Offline performance trial (not compliant: shortened on purpose)"

# 6. Server at a rate the engine holds (auto: a fraction of the Offline throughput)
qps=$SERVER_QPS
if [[ $qps == auto ]]; then
    qps=$("$PY" bench/device/smoke_report.py --offline "$WORK/offline" --suggest-qps "$SERVER_LOAD") \
        || qps=$SERVER_QPS_FALLBACK
    echo "== server rate: $qps QPS ($SERVER_LOAD x the Offline run's samples/s)"
fi
trial server 240 Server server "$qps" "$SERVER_S" "$SERVER_MIN_QUERIES" \
    "a short Server performance trial (not compliant: shortened on purpose)"

# 7. the report: LoadGen's own percentiles, read with the checker's mllog parser
report_args=(--offline "$WORK/offline" --server "$WORK/server" --model "$MODEL_DIR" --steps "$WORK/steps.tsv")
[[ -d $WORK/calibration ]] && report_args+=(--calibration "$WORK/calibration")
"$PY" bench/device/smoke_report.py "${report_args[@]}" --device "$DEVICE" --out "$OUT"
rc=$?
echo "gpu_smoke: done in $((SECONDS - t_start)) s, report exit $rc; files in $OUT:"
ls -l "$OUT"
exit $rc
