#!/usr/bin/env bash
# compute-sanitizer over every hand-written BFS and SSSP kernel on small graphs (GPU machine):
#   bash tools/sanitize.sh [method ...]
# memcheck (out-of-bounds and misaligned accesses, leaks of device memory by the kernels) and
# racecheck (shared-memory hazards: the block, warp and single-block queues). Exit status
# non-zero when a tool reports an error or a level is wrong. Logs go to $OUT when it is set.
set -uo pipefail
OUT=${OUT:-/tmp/gbla-out}
mkdir -p "$OUT"
status=0
for tool in memcheck racecheck; do
    log="$OUT/sanitize_$tool.log"
    GBLA_SANITIZE_TOOL=$tool compute-sanitizer --tool "$tool" --error-exitcode 3 \
        --print-limit 20 python3 tools/sanitize_kernels.py "$@" > "$log" 2>&1
    rc=$?
    summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -n 1)
    echo "$tool: exit $rc; ${summary:-no summary line}"
    [ $rc -ne 0 ] && { status=1; tail -n 40 "$log"; }
done
exit $status
