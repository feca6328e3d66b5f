#!/usr/bin/env bash
# Run ON THE DEVICE MACHINE (the device tool's `run`, with carry [".whl"]), once per call, until it says
# "done". One training run spread over several calls of at most 10 minutes each (docs/gpu.md):
#
#   scripts/gpu/train.sh RUN MINUTES MODEL [SEEDS] [PROGRAMS]
#     RUN       runs/RUN on the device (kept between calls while the machine stays warm)
#     MINUTES   the run's whole training budget (the cosine schedule ends with it), e.g. 20
#     MODEL     a shape of model_backend/model/config.py (medium, base, ...)
#     SEEDS     data builds, one per seed from 1, built in parallel (default 4)
#     PROGRAMS  generated programs per build (default 7000; real code comes on top)
#   MORE_SEEDS=N  N further builds in the background after the first SEEDS (MORE_WORKERS workers each, default 4)
#
# Each call: installs the carried wheels into /tmp/site; builds the data once (seeds 1..SEEDS on all
# cores, mixed by symlinks in data_out/gpu-mix with the held-out split of seed 0's functions, which is the
# same for every seed); trains runs/RUN, resuming, and stops it with SIGINT before the call's limit (the
# trainer checkpoints on Ctrl-C); when the budget is used up the trainer exports final/ in bf16 and this
# script packs it into $OUT as 15 MB pieces (final.tar.part-aa, -ab, ...) plus training_log.json.
# Environment: CALL_SECONDS (default 560: the call's own budget), EXTRA (more `ndb train` options),
# BUILD_EXTRA (more `ndb data build` options),
# NO_WHEELS=1 (use the python3 on PATH as it is: how the script is tried on the CPU machine).
set -uo pipefail
shopt -s nullglob
START=$(date +%s)
RUN=${1:?run name}; MINUTES=${2:?minutes}; MODEL=${3:?model shape}; SEEDS=${4:-4}; PROGRAMS=${5:-7000}
CALL_SECONDS=${CALL_SECONDS:-560}
OUT=${OUT:-/tmp/out}
cd "$(dirname "$0")/../.."
mkdir -p "$OUT"

# shellcheck source=scripts/gpu/setup.sh
source scripts/gpu/setup.sh

# --- data: SEEDS builds in parallel, each with CORES/SEEDS workers; a finished build is reused
build() {  # build SEED WORKERS: one data build; its log beside it
    "${NDB[@]}" data build --out "data_out/gpu-s$1" --seed "$1" --programs "$PROGRAMS" --workers "$2" \
        --hide-start-locals 0.25 --quiet ${BUILD_EXTRA:-} > "data_out/gpu-s$1.log" 2>&1
}
mkdir -p data_out
if [ ! -f data_out/gpu-first.complete ]; then
    WORKERS=$(( CORES / SEEDS > 0 ? CORES / SEEDS : 1 ))
    pids=()
    for s in $(seq 1 "$SEEDS"); do build "$s" "$WORKERS" & pids+=($!); done
    for p in "${pids[@]}"; do wait "$p" || { echo "a data build failed:"; tail -5 data_out/gpu-s*.log; exit 4; }; done
    touch data_out/gpu-first.complete
    echo "data: $SEEDS builds in $(( $(date +%s) - START ))s"
    grep -h "^train:" data_out/gpu-s*.log
    # MORE_SEEDS further builds run in the background, in a session of their own so that they outlive
    # this call (they run while the machine stays warm); each later call trains on their finished shards
    if [ "${MORE_SEEDS:-0}" -gt 0 ]; then
        export -f build; export PROGRAMS BUILD_EXTRA PYTHONPATH
        setsid nohup bash -c "NDB=(${NDB[*]}); $(declare -f build); for s in \$(seq $((SEEDS + 1)) $((SEEDS + MORE_SEEDS))); do build \$s ${MORE_WORKERS:-4} & done; wait" \
            > data_out/gpu-more.log 2>&1 < /dev/null &
        echo "started $MORE_SEEDS more builds in the background"
    fi
fi
# the mix: every complete train shard of every build (stable names, so the tokenizer cache of a shard
# stays valid from call to call), and seed 1's held-out split (the same functions in every build)
MIX=data_out/gpu-mix
rm -rf "$MIX" && mkdir -p "$MIX"
for d in data_out/gpu-s*/; do
    s=$(basename "$d"); s=${s#gpu-s}
    for f in "$d"train-*.stats.json; do
        b=$(basename "$f" .stats.json)
        [ -f "$d$b.jsonl" ] || continue
        ln -s "../gpu-s$s/$b.jsonl" "$MIX/train-s$(printf %03d "$s")-${b#train-}.jsonl"
        ln -s "../gpu-s$s/$b.stats.json" "$MIX/train-s$(printf %03d "$s")-${b#train-}.stats.json"
    done
done
for f in data_out/gpu-s1/heldout-*; do ln -s "../gpu-s1/$(basename "$f")" "$MIX/$(basename "$f")"; done
echo "mix: $(ls "$MIX"/train-*.jsonl | wc -l) train shards; background builds: $(ls -d data_out/gpu-s*/ | wc -l) dirs"

# --- the shipped model's tokenizer (its files only: the checkpoint's model card must not follow)
TOK=data_out/gpu-tokenizer
copy_tokenizer "$TOK"

# --- train until this call's time is nearly used; SIGINT makes the trainer checkpoint and exit
LEFT=$(( CALL_SECONDS - ($(date +%s) - START) - 45 ))  # 45 s for the checkpoint and the packing
if [ "$LEFT" -lt 60 ]; then echo "not enough of this call left to train; call again"; exit 0; fi
# shellcheck disable=SC2086
timeout -s INT "$LEFT" "${NDB[@]}" train --data "$MIX" --tokenizer "$TOK" \
    --out "runs/$RUN" --model "$MODEL" --minutes "$MINUTES" --batch-tokens 65536 --lr 2e-3 --warmup 100 \
    --eval-every 250 --save-every 250 --eval-examples 256 --export-dtype bfloat16 --no-progress ${EXTRA:-} \
    2>&1 | grep -v "^\s*$" | tail -20
RC=${PIPESTATUS[0]}
if [ "$RC" -ne 0 ]; then
    python3 -c "import json; s=json.load(open('runs/$RUN/last/train_state.json')); print('checkpoint at step', s['step'], 'tokens', s['tokens'], 'elapsed_s', round(s['elapsed_s']))" 2>/dev/null
    snaps=("runs/$RUN/snapshots/step-"*)
    if [ "${#snaps[@]}" -gt 0 ]; then
        SNAP=${snaps[-1]}  # the newest snapshot comes back too, in case no later call can finish the run
        tar -C "$(dirname "$SNAP")" -cf - "$(basename "$SNAP")" | split -b 15m - "$OUT/snapshot.tar.part-"
        cp "runs/$RUN/last/train_state.json" "$OUT/train_state.json" 2>/dev/null
        echo "packed $SNAP"
    fi
    echo "paused (rc $RC): call again to continue"
    exit 0
fi
tar -C "runs/$RUN" -cf - final | split -b 15m - "$OUT/final.tar.part-"
cp "runs/$RUN/final/training_log.json" "$OUT/training_log.json"
ls -la "$OUT"
echo "done: here, cat FILES_AT/final.tar.part-* | tar -xf - -C runs/$RUN"
