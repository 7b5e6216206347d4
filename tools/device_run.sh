#!/usr/bin/env bash
# The one script for the lent GPU machine: install gbla, run the test suite with the GPU tests
# enabled, then the benchmarks. From the repo root on the GPU machine:
#   bash tools/device_run.sh [all|tests|bench|algos] [pytest args...]
# 'all' (the default) = tests + bench + algos. Real graphs are read from .device-data/ (a copy
# of ../shared/data carried along) when present. Logs and JSON go to $OUT when it is set.
set -uo pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/gbla-out}
mkdir -p "$OUT"
part=${1:-all}
[ $# -gt 0 ] && shift
[ -d .device-data ] && export GBLA_DATA="$PWD/.device-data"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c "import cupy, sys; print('python', sys.version.split()[0], 'cupy', cupy.__version__, 'cuda runtime', cupy.cuda.runtime.runtimeGetVersion())"
python3 -m pip install -q --no-deps --no-build-isolation -e . 2>&1 | tail -n 2
status=0
if [ "$part" = all ] || [ "$part" = tests ]; then
    python3 -m pytest -q -p no:cacheprovider -ra -n 8 "$@" 2>&1 | tee "$OUT/pytest.log" | tail -n 30
    status=${PIPESTATUS[0]}
    echo "pytest exit status: $status"
fi
if [ "$part" = all ] || [ "$part" = bench ]; then
    python3 benchmarks/bench_mxv.py --scale 22 --json "$OUT/bench_mxv.json" 2>&1 | tee "$OUT/bench_mxv.log"
fi
if [ "$part" = all ] || [ "$part" = algos ]; then
    algo() { python3 benchmarks/bench_algorithms.py "$@" --device gpu 2>&1 | tail -n 3 | tee -a "$OUT/bench_algorithms.log"; }
    algo rmat:22 --algo bfs --scipy-sources 4 --json "$OUT/bfs_rmat22.json"
    algo rmat:22 --algo sssp --weights 1 255 --scipy-sources 2 --json "$OUT/sssp_rmat22.json"
    if [ -f .device-data/road/USA-road-NE.mtx.gz ]; then
        algo .device-data/road/USA-road-NE.mtx.gz --algo bfs --json "$OUT/bfs_ne.json"
        algo .device-data/road/USA-road-NE.mtx.gz --algo sssp --weights 1 1000 --json "$OUT/sssp_ne.json"
    fi
fi
exit "$status"
