#!/usr/bin/env bash
# The one script for the lent GPU machine: install gbla, run the whole test suite with the GPU
# tests enabled, then the benchmark. Usage (from the repo root, on the GPU machine):
#   bash tools/device_run.sh [pytest args...]
# Writes logs and JSON under $OUT when it is set (the device tool's output folder).
set -uo pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/gbla-out}
mkdir -p "$OUT"
[ -d .device-data ] && export GBLA_DATA="$PWD/.device-data"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c "import cupy, sys; print('python', sys.version.split()[0], 'cupy', cupy.__version__, 'cuda runtime', cupy.cuda.runtime.runtimeGetVersion())"
python3 -m pip install -q --no-deps --no-build-isolation -e . 2>&1 | tail -n 2
python3 -m pytest -q -p no:cacheprovider -ra -n 8 "$@" 2>&1 | tee "$OUT/pytest.log" | tail -n 40
status=${PIPESTATUS[0]}
echo "pytest exit status: $status"
python3 benchmarks/bench_mxv.py --scale 22 --json "$OUT/bench_mxv.json" 2>&1 | tee "$OUT/bench.log"
exit "$status"
