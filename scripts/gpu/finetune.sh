#!/usr/bin/env bash
# Run ON THE DEVICE MACHINE in ONE call (the device tool's `run`, carry [".whl", ".gpudata"]): fine-tune the
# shipped default on fresh data rich in input jumps, when the whole device time is one call
# (15 minutes, a machine's start included; docs/gpu.md, "The one-call fine-tune").
#
#   scripts/gpu/finetune.sh RUN
#
# 1. installs the carried wheels into /tmp/site;
# 2. builds BUILDS data sets side by side (seeds SEED0+1.., 16 cores shared), each stopped after
#    BUILD_SECONDS: a build writes its shards as it goes, and every complete shard is used. Only the
#    first build adds the real code (HumanEval, `algorithms`: the same functions in every build);
# 3. fine-tunes INIT (default model_backend/checkpoints/default) on them (--init-from) until the call's budget is nearly
#    used (the cosine schedule ends with it), on the builds and the carried train shards, with the carried
#    held-out shards for its held-out loss;
# 4. packs final/ (bf16) into $OUT as 15 MB pieces, plus the training log and this script's log.
# Environment: CALL_SECONDS (default 570), BUILDS (4), PROGRAMS (4000 per build), SEED0 (350), VARIANTS,
# BUILD_SECONDS (190), BUILD_EXTRA (default "--input-jumps 0.5"), EXTRA (more `ndb train` options),
# INIT (the checkpoint to start from, e.g. model_backend/checkpoints/proposer; only it need travel),
# NO_WHEELS=1 (use the python3 on PATH as it is: how the script is tried on the CPU machine),
# FORMAT=3 (upgrade INIT to read trace format 3 first: model_backend/model/upgrade.py).
# The sandbox: bubblewrap and libseccomp come carried as Debian packages in .gpubin/ (unpacked under
# /tmp/gpubin, NDB_BWRAP pointing at bwrap); where the machine refuses namespaces even so, the builds of
# our own generated programs run with NDB_NO_SANDBOX=1 on that disposable machine, and the log says so.
set -uo pipefail
shopt -s nullglob
START=$(date +%s)
RUN=${1:?run name}
CALL_SECONDS=${CALL_SECONDS:-570}; BUILDS=${BUILDS:-4}; PROGRAMS=${PROGRAMS:-4000}; SEED0=${SEED0:-350}
BUILD_SECONDS=${BUILD_SECONDS:-190}; BUILD_EXTRA=${BUILD_EXTRA:---input-jumps 0.5}
INIT=${INIT:-model_backend/checkpoints/default}
OUT=${OUT:-/tmp/out}
cd "$(dirname "$0")/../.."
mkdir -p "$OUT"
exec > >(tee "$OUT/finetune.log") 2>&1
since() { echo "$(( $(date +%s) - START ))s"; }

# shellcheck source=scripts/gpu/setup.sh
source scripts/gpu/setup.sh
echo "ready at $(since), $CORES cores"

setup_sandbox

# --- a checkpoint that reads trace format 3 (one more token: <|format_v3|>)
if [ "${FORMAT:-2}" = 3 ]; then
    python3 -m model_backend.model.upgrade "$INIT" runs/init-v3 && INIT=runs/init-v3 || { echo "upgrade failed"; exit 6; }
fi

# --- carried data (.gpudata/*.tar.xz, unpacked beside the builds): train shards under any folder, and
#     held-out shards for the trainer's held-out loss
mkdir -p data_out/ft-carried
UNPACK=()
for f in .gpudata/*.tar.xz; do python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter='data')" "$f" data_out/ft-carried & UNPACK+=($!); done

# --- data: BUILDS builds side by side, each stopped after BUILD_SECONDS (its complete shards stay)
mkdir -p data_out
WORKERS=$(( BUILDS > 0 && CORES / BUILDS > 0 ? CORES / BUILDS : 1 ))  # BUILDS=0: carried data only
pids=()
for k in $(seq 1 "$BUILDS"); do
    real=--no-real-code; [ "$k" -eq 1 ] && real=--real-code
    # shellcheck disable=SC2086
    timeout -s TERM "$BUILD_SECONDS" "${NDB[@]}" data build --out "data_out/ft-s$k" --seed $(( SEED0 + k )) \
        --programs "$PROGRAMS" --workers "$WORKERS" --shard-size 1000 $real --quiet $BUILD_EXTRA \
        > "data_out/ft-s$k.log" 2>&1 &
    pids+=($!)
done
for p in "${pids[@]}" "${UNPACK[@]}"; do wait "$p"; done  # not a bare `wait`: it would wait for the log's tee
MIX=data_out/ft-mix
rm -rf "$MIX" && mkdir -p "$MIX"
for k in $(seq 1 "$BUILDS"); do
    for f in data_out/ft-s"$k"/train-*.stats.json; do
        b=$(basename "$f" .stats.json)
        [ -f "data_out/ft-s$k/$b.jsonl" ] || continue
        ln -s "../ft-s$k/$b.jsonl" "$MIX/train-s$k-${b#train-}.jsonl"
        ln -s "../ft-s$k/$b.stats.json" "$MIX/train-s$k-${b#train-}.stats.json"
    done
done
# a shard counts only with its stats file beside it (model/train.find_shards), so both are linked
k=0; held=0
for f in data_out/ft-carried/*/*-*.stats.json; do
    d=${f%.stats.json}; split=$(basename "$d"); split=${split%%-*}
    [ -f "$d.jsonl" ] || continue
    [ "$split" = heldout ] && held=$((held + 1))
    k=$((k + 1)); ln -s "$(realpath "$d.jsonl")" "$MIX/$split-c$k.jsonl"; ln -s "$(realpath "$f")" "$MIX/$split-c$k.stats.json"
done
if [ "$held" -eq 0 ]; then  # no held-out shard carried: the first build's give the held-out loss
    for f in data_out/ft-s1/heldout-*.stats.json; do
        d=${f%.stats.json}; [ -f "$d.jsonl" ] || continue
        k=$((k + 1)); ln -s "$(realpath "$d.jsonl")" "$MIX/heldout-b$k.jsonl"; ln -s "$(realpath "$f")" "$MIX/heldout-b$k.stats.json"
    done
fi
python3 - "$MIX" <<'EOF'
import json, sys, pathlib
stats = [json.loads(p.read_text()) for p in pathlib.Path(sys.argv[1]).glob("train-*.stats.json")]
print("mix:", len(stats), "train shards with stats,", sum(s["stats"]["trajectories"] for s in stats), "trajectories,",
      sum(s["stats"]["chars"] for s in stats), "chars")
EOF
echo "data at $(since)"
[ "$BUILDS" -gt 0 ] && tail -n 2 data_out/ft-s*.log

# --- the shipped model's tokenizer (its files only: the checkpoint's model card must not follow)
TOK=data_out/ft-tokenizer
copy_tokenizer "$TOK" "$INIT"

# --- fine-tune until the call's budget is nearly used; SIGINT (the safety net) checkpoints and exits.
#     VARIANTS ('|'-separated `ndb train` options) runs one trainer per variant side by side on the same
#     data (runs/RUN-1, RUN-2, ...): an 11 M model leaves most of the GPU idle, so two candidates cost
#     little more than one. Without it, one trainer in runs/RUN.
LEFT=$(( CALL_SECONDS - ($(date +%s) - START) - 45 ))  # 45 s for the exports and the packing
if [ "$LEFT" -lt 90 ]; then echo "not enough of this call left to train"; exit 4; fi
MINUTES=$(python3 -c "print(round(($LEFT - 30) / 60, 2))")  # the trainer's budget counts its setup too; 30 s for its export
IFS='|' read -r -a VARS <<< "${VARIANTS:-}"
[ "${#VARS[@]}" -eq 0 ] && VARS=("")
NAMES=(); pids=(); mkdir -p runs
for i in "${!VARS[@]}"; do
    name=$RUN; [ "${#VARS[@]}" -gt 1 ] && name=$RUN-$((i + 1))
    NAMES+=("$name")
    echo "training $name for $MINUTES minutes (limit ${LEFT}s): ${EXTRA:-} ${VARS[$i]}"
    # shellcheck disable=SC2086
    timeout -s INT "$LEFT" "${NDB[@]}" train --data "$MIX" --tokenizer "$TOK" --out "runs/$name" \
        --init-from "$INIT" --model medium --minutes "$MINUTES" \
        --batch-tokens 32768 --lr 2e-4 --warmup 100 --eval-every 500 --save-every 100000 --eval-examples 256 \
        --seed $((35 + i)) --export-dtype bfloat16 --no-progress ${EXTRA:-} ${VARS[$i]} > "runs/$name.log" 2>&1 &
    pids+=($!)
done
for i in "${!pids[@]}"; do
    wait "${pids[$i]}"; RC=$?
    name=${NAMES[$i]}
    grep -v "^\s*$" "runs/$name.log" | tail -12
    echo "trainer $name rc $RC at $(since)"
    if [ ! -d "runs/$name/final" ] && [ -f "runs/$name/last/model.safetensors" ]; then
        # interrupted (the safety net fired): export the checkpoint SIGINT wrote, like the trainer's final/
        "${NDB[@]}" export "runs/$name/last/model.safetensors" --like "$INIT" \
            --out "runs/$name/final" --export-dtype bfloat16 && echo "exported last/ as final/"
    fi
done
PACKED=0
for name in "${NAMES[@]}"; do
    [ -d "runs/$name/final" ] || { echo "no final/ for $name"; continue; }
    PACKED=$((PACKED + 1))
    if [ "${#NAMES[@]}" -eq 1 ]; then
        tar -C "runs/$name" -cf - final | split -b 15m - "$OUT/final.tar.part-"
        cp "runs/$name/final/training_log.json" "$OUT/training_log.json" 2>/dev/null
        echo "here: mkdir -p runs/$name && cat FILES_AT/final.tar.part-* | tar -xf - -C runs/$name"
    else  # the training log travels inside final/: $OUT brings back at most 8 files
        tar -C "runs/$name" -cf - final | split -b 15m - "$OUT/$name.tar.part-"
        echo "here: mkdir -p runs/$name && cat FILES_AT/$name.tar.part-* | tar -xf - -C runs/$name"
    fi
done
ls -la "$OUT"
[ "$PACKED" -gt 0 ] || exit 5
echo "done at $(since)"
