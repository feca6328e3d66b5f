#!/usr/bin/env bash
# Run ON THE DEVICE MACHINE in one call (carry [".whl", ".gpubin", ".evaldata"]): the shipped model's
# CruxEval and next-state figures on the machine's CPU cores (16 against this project's 2), with the GPU
# left alone and torch on the CPU as in a debugging session. Every problem is its own item; the figures
# are merged here afterwards (ndb eval merge).
#
#   scripts/gpu/cpu_evals.sh
#
# 1. CruxEval dev (.evaldata/cruxeval_dev.jsonl, a copy of ../shared/data/cruxeval_dev.jsonl): input
#    inference on problems INPUT_FROM..160 and output via step_return on OUTPUT_FROM..160, in chunks of
#    CHUNK problems run JOBS at a time, one thread each, each with the default 120 s per problem. A chunk
#    still running at the call's deadline is stopped and its problems are missing from the merge.
# 2. next-state: a fresh held-out build (`ndb data build --seed 99 --format 2`, NS_PROGRAMS programs),
#    then `ndb eval next-state --limit NS_LIMIT` with this tree and, where .evaldata/old/ holds an older
#    tree (`git archive REV model_backend dap_server | tar -x -C .evaldata/old`), with that one on the same
#    build and the same weights: a paired comparison of two versions of the code.
# 3. packs the results and logs into $OUT/evals.tar.gz.
# Environment: CALL_SECONDS (560), CHUNK (5), JOBS (cores - NS_WORKERS), INPUT_FROM (1), OUTPUT_FROM (81),
# NS_PROGRAMS (400), NS_LIMIT (150), NS_WORKERS (4), NO_WHEELS=1 (use the python3 on PATH as it is).
set -uo pipefail
shopt -s nullglob
START=$(date +%s)
CALL_SECONDS=${CALL_SECONDS:-560}; CHUNK=${CHUNK:-5}; INPUT_FROM=${INPUT_FROM:-1}; OUTPUT_FROM=${OUTPUT_FROM:-81}
NS_PROGRAMS=${NS_PROGRAMS:-400}; NS_LIMIT=${NS_LIMIT:-150}; NS_WORKERS=${NS_WORKERS:-4}
OUT=${OUT:-/tmp/out}
cd "$(dirname "$0")/../.."
ROOT=$PWD
mkdir -p "$OUT"
exec > >(tee "$OUT/cpu_evals.log") 2>&1
since() { echo "$(( $(date +%s) - START ))s"; }

# shellcheck source=scripts/gpu/setup.sh
source scripts/gpu/setup.sh
setup_sandbox
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 CUDA_VISIBLE_DEVICES=
JOBS=${JOBS:-$(( CORES > NS_WORKERS + 1 ? CORES - NS_WORKERS : 1 ))}
DEADLINE=$(( START + CALL_SECONDS - 30 ))  # 30 s to pack
left() { echo $(( DEADLINE - $(date +%s) )); }
echo "ready at $(since), $CORES cores, $JOBS CruxEval jobs"

W=/tmp/evals
rm -rf "$W" && mkdir -p "$W/chunks" "$W/res"
python3 - "$ROOT/.evaldata/cruxeval_dev.jsonl" "$W/chunks" "$CHUNK" "$INPUT_FROM" "$OUTPUT_FROM" <<'EOF'
import sys
from pathlib import Path
lines = Path(sys.argv[1]).read_text().splitlines()
out, chunk, first = Path(sys.argv[2]), int(sys.argv[3]), {"input": int(sys.argv[4]), "output": int(sys.argv[5])}
for task in ("input", "output"):  # input first: its problems take longest
    for start in range(first[task] - 1, len(lines), chunk):
        (out / f"{task}-{start + 1:03d}.jsonl").write_text("\n".join(lines[start:start + chunk]) + "\n")
print(len(list(out.iterdir())), "chunks of", chunk, "problems")
EOF

# --- next-state, on NS_WORKERS cores beside the CruxEval jobs (its build adds the real code whatever NS_PROGRAMS)
(
    timeout "$(left)" "${NDB[@]}" data build --out "$W/s99" --seed 99 --programs "$NS_PROGRAMS" --workers "$NS_WORKERS" \
        --format 2 --quiet > "$W/res/build_s99.log" 2>&1
    echo "next-state build done at $(since): $(tail -n 1 "$W/res/build_s99.log")"
    timeout "$(left)" "${NDB[@]}" eval next-state --data "$W/s99" --limit "$NS_LIMIT" \
        --json "$W/res/next_state_new.json" > "$W/res/next_state_new.txt" 2>&1 &
    if [ -d .evaldata/old/model_backend ]; then
        (cd .evaldata/old && PYTHONPATH=/tmp/site:$PWD timeout "$(left)" python3 -m dap_server eval next-state \
            --model "$ROOT/model_backend/checkpoints/default" --data "$W/s99" --limit "$NS_LIMIT" \
            --json "$W/res/next_state_old.json" > "$W/res/next_state_old.txt" 2>&1)
    fi
    wait
    echo "next-state done at $(since)"
) &
NS=$!

# --- CruxEval chunks, JOBS at a time
export W ROOT DEADLINE
ls "$W"/chunks/*.jsonl | xargs -P "$JOBS" -I{} bash -c '
    f={}; name=$(basename "$f" .jsonl); task=${name%%-*}
    t=$(( DEADLINE - $(date +%s) )); [ "$t" -gt 5 ] || exit 0
    timeout "$t" python3 -m dap_server eval cruxeval --data "$f" --task "$task" \
        --json "$W/res/crux-$name.json" > "$W/res/crux-$name.txt" 2>&1 || echo "$name stopped or failed"'
echo "CruxEval chunks done at $(since): $(ls "$W"/res/crux-*.json | wc -l) of $(ls "$W"/chunks | wc -l) wrote results"
wait "$NS"
tail -n 3 "$W"/res/next_state_*.txt
tar -C "$W" -czf "$OUT/evals.tar.gz" res
ls -la "$OUT"
echo "done at $(since)"
