#!/usr/bin/env bash
# The one script for the lent GPU machine: install gbla, run the test suite with the GPU tests
# enabled, then the benchmarks. From the repo root on the GPU machine:
#   bash tools/device_run.sh [all|tests|sanitize|bench|bfs[_rmat|_real]|sssp[_rmat|_real]|profile|ablation|distributed|distributed_beyond|multisource|outofcore|corpus|first_call [warmup|bfs|sssp|prebuilt]] [args]
# 'all' (the default) = every part: the test suite, compute-sanitizer over the BFS kernels,
# one vxm timing, and the `gbla bench` runs behind BENCHMARKS.md (bfs, sssp). Real graphs are
# read from .device-data/ (a copy of ../shared/data carried along) when present. Logs and JSON go to $OUT when it is set.
set -uo pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/gbla-out}
mkdir -p "$OUT"
part=${1:-all}
[ $# -gt 0 ] && shift
[ -d .device-data ] && export GBLA_DATA="$PWD/.device-data"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c "import cupy, sys; print('python', sys.version.split()[0], 'cupy', cupy.__version__, 'cuda runtime', cupy.cuda.runtime.runtimeGetVersion())"
# The machine's own setuptools builds (no network): one older than 77 cannot read the SPDX
# licence string, so it gets the older table form for this install only.
if ! python3 -m pip install -q --no-deps --no-build-isolation -e . 2>&1 | tail -n 2; then :; fi
if ! (cd /tmp && python3 -c "import gbla") 2>/dev/null; then
    echo "setuptools $(python3 -c 'import setuptools; print(setuptools.__version__)'): installing with the licence table"
    cp pyproject.toml /tmp/pyproject.toml.orig
    sed -i 's/^license = "BSD-3-Clause"$/license = { text = "BSD-3-Clause" }/; /^license-files/d; s/setuptools>=77/setuptools>=61/' pyproject.toml
    python3 -m pip install -q --no-deps --no-build-isolation -e . 2>&1 | tail -n 2
    cp /tmp/pyproject.toml.orig pyproject.toml
fi
# Packages the machine's image lacks (dask and distributed, for the Dask tests and
# gbla.distributed.on_dask; their other needs are on the image) travel as wheels in .whl
# (git-ignored; name it in carry), fetched here with
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#     --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux1_x86_64 \
#     -d .whl dask distributed tornado zict tblib partd locket
# and installed outside the image's site-packages.
if ls .whl/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
# Kernels compiled ahead of time ('first_call prebuilt' makes them; gbla/_prebuilt.py):
# a .prebuilt folder carried along is where the loader looks first, so that a fresh machine
# loads them instead of running NVRTC (GBLA_KERNEL_SPECS=DIR also records what a run compiles).
[ -d .prebuilt ] && export GBLA_PREBUILT="$PWD/.prebuilt${GBLA_PREBUILT:+:$GBLA_PREBUILT}"
status=0
if [ "$part" = all ] || [ "$part" = tests ]; then
    # a test that hangs (a kernel that never ends) is killed after 5 minutes, naming itself,
    # instead of eating the whole call
    limit=(); python3 -c "import pytest_timeout" 2>/dev/null && limit=(--timeout 300 --timeout-method thread)
    # the built-in methods' kernels compiled first, a process a core (about 30 s on a fresh
    # H100 machine), so that the workers load them instead of each compiling its own
    python3 -m gbla warmup 2>&1 | tee "$OUT/warmup.log" | tail -n 3
    # a worker per core (16 on the lent machines): a cold machine's NVRTC compiles, which the
    # workers repeat, are what a GPU run spends most of its time on (the mxv oracle: 580 s
    # with 8 workers); GBLA_WORKERS overrides. Test by test, not the default file by file (the
    # oracle's GPU tests would share one worker). pyproject leaves the tests marked exhaustive
    # (CPU compiles CI runs) out; 'tests -m exhaustive' runs them.
    python3 -m pytest -q -p no:cacheprovider -ra -n "${GBLA_WORKERS:-$(nproc)}" --dist load "${limit[@]}" \
        --durations 15 "$@" 2>&1 | tee "$OUT/pytest.log" | tail -n 45
    status=${PIPESTATUS[0]}
    echo "pytest exit status: $status"
fi
if [ "$part" = all ] || [ "$part" = sanitize ]; then
    bash tools/sanitize.sh || status=1
fi
if [ "$part" = all ] || [ "$part" = bench ]; then
    python3 benchmarks/bench_mxv.py --scale 22 --json "$OUT/bench_mxv.json" 2>&1 | tee "$OUT/bench_mxv.log"
fi
# Where a level of the algebra goes: graph nodes an iteration, us/level, kernels under ncu.
if [ "$part" = profile ]; then
    g=${1:-.device-data/road/USA-road-NE.mtx.gz}
    python3 tools/profile_loop.py "$g" 2>&1 | tee "$OUT/profile.log"
    if command -v ncu >/dev/null; then
        # the clocks left as they run (ncu's default locks them at base: every kernel slower)
        ncu --graph-profiling node --clock-control none --metrics gpu__time_duration.sum \
            --launch-skip 400 --launch-count 120 --csv --log-file "$OUT/ncu.csv" \
            python3 tools/profile_loop.py "$g" --once --per-iteration \
            >/dev/null 2>&1 && python3 tools/profile_loop.py --summarize "$OUT/ncu.csv" 2>&1 | tee -a "$OUT/profile.log"
    fi
fi
# BFS and SSSP over every GPU of the machine, one process a GPU (NCCL), and over one, each rank
# generating its part of rmat(SCALE) (default 25; a DistMatrix keeps int32 ids, float64
# weights and the transpose's rows, 24 bytes a stored edge and more while it is built, so
# rmat(26)'s 2.1 G stored edges are about 52 GB on one GPU before the build's sorts): GTEPS per
# GPU count (issue 13's figures).
# Further arguments go to the benchmark (--edge-factor, --sources, --algos ...).
# 'distributed_beyond SCALE [args]' runs on all the machine's GPUs only: a graph whose stored
# form is larger than one GPU (rmat(27) with --edge-factor 24: about 155 GB stored, 77 GB a rank
# on two GPUs; the build holds a rank's part and one piece of edges).
# 'distributed' runs 1, 2, 4 and 8 GPUs up to the machine's count, the one-GPU run also timing
# the best single-GPU methods (SINGLE, default bfs:persistent sssp:auto) on the whole graph:
# every later run reports its rows against them (--baseline), as issue 37 asks.
if [ "$part" = distributed ] || [ "$part" = distributed_beyond ]; then
    gpus=$(nvidia-smi -L | wc -l)
    scale=${1:-25}
    [ $# -gt 0 ] && shift
    counts=""
    for n in 1 2 4 8; do [ "$n" -le "$gpus" ] && counts="$counts $n"; done
    [ "$part" = distributed_beyond ] && counts="$gpus"
    one="$OUT/${part}_rmat${scale}_1gpu.json"
    for n in $counts; do
        extra=()
        if [ "$part" = distributed ] && [ "$n" = 1 ]; then
            extra=(--single ${SINGLE:-bfs:persistent sssp:auto})
        elif [ -f "$one" ]; then
            extra=(--baseline "$one")
        fi
        python3 -u -m gbla.distributed.launch -n "$n" benchmarks/bench_distributed.py \
            --scale "$scale" "$@" "${extra[@]}" --json "$OUT/${part}_rmat${scale}_${n}gpu.json" 2>&1 | tee -a "$OUT/distributed.log"
    done
fi
# The article's ablation of edge_bellman_ford (R-MAT, average degree 32, scales 14-24).
if [ "$part" = ablation ]; then
    python3 benchmarks/bench_sssp_ablation.py "$@" --json "$OUT/sssp_ablation.json" \
        --plot "$OUT/sssp_ablation.png" 2>&1 | tee "$OUT/sssp_ablation.log"
fi
# Issue 12's aims: BFS and SSSP from 1, 8 and 64 sources in one call against one source alone
# on R-MAT graphs (GRAPHS, default rmat:22), and networkx's all_pairs_shortest_path_length
# through the gbla backend against plain networkx on a 10,000-vertex graph; extra args go to
# benchmarks/bench_multisource.py.
if [ "$part" = multisource ]; then
    python3 benchmarks/bench_multisource.py --graph ${GRAPHS:-rmat:22} --algo bfs,sssp \
        --nx-all-pairs 10000 --json "$OUT/multisource.json" "$@" 2>&1 | tee "$OUT/multisource.log"
    status=${PIPESTATUS[0]}
fi
# The BENCHMARKS.md runs: every method plus peers, one JSON per (algorithm, graph set).
D=.device-data
bench() { python3 -m gbla bench --no-progress "$@" 2>&1 | tee -a "$OUT/bench.log"; }
# benchmarks/bench_outofcore.py: every out-of-core strategy at half the graph's bytes.
if [ "$part" = outofcore ]; then
    python3 benchmarks/bench_outofcore.py ${OOC_GRAPHS:---graph rmat:24 --graph $D/road/USA-road-NE.mtx.gz} \
        --json "$OUT/outofcore.json" "$@" 2>&1 | tee "$OUT/outofcore.log"
    status=${PIPESTATUS[0]}
fi
# bfs = bfs_rmat + bfs_real and sssp = sssp_rmat + sssp_real: run the halves as separate
# calls when one call's 10 minutes would not hold both. SSSP's table leaves out the ablation
# variants of edge_bellman_ford (the 'ablation' part measures them) and the out-of-core methods.
ROADS="$D/road/USA-road-NE.mtx.gz $D/road/USA-road-FLA.mtx.gz $D/social/ego-Twitter.undirected.mtx.gz"
SSSP_METHODS=bellman_ford,delta_stepping,edge_bellman_ford,frontier_bellman_ford,persistent_bellman_ford,single_block_bellman_ford,near_far,persistent_delta_stepping
if [ "$part" = all ] || [ "$part" = bfs ] || [ "$part" = bfs_rmat ]; then
    bench rmat:22 rmat:24 --algo bfs --methods all --peers --peer-sources 2 --json "$OUT/bfs_rmat.json"
fi
if [ "$part" = all ] || [ "$part" = bfs ] || [ "$part" = bfs_real ]; then
    bench $ROADS --algo bfs --methods all --peers --json "$OUT/bfs_real.json"
fi
if [ "$part" = all ] || [ "$part" = sssp ] || [ "$part" = sssp_rmat ]; then
    bench rmat:22 rmat:24 --algo sssp --methods $SSSP_METHODS --peers --peer-sources 1 --sources 8 \
        --weights 1 255 --json "$OUT/sssp_rmat.json"
fi
if [ "$part" = all ] || [ "$part" = sssp ] || [ "$part" = sssp_real ]; then
    bench $ROADS --algo sssp --methods $SSSP_METHODS --peers --sources 8 --json "$OUT/sssp_real.json"
fi
# Every real graph of the data set (tiny test graphs and the truncated .first50k files aside)
# against SciPy: where the GPU wins and where it does not. 'corpus [bfs|sssp]'.
CORPUS="$D/mtx/bips98_606.mtx $D/mtx/jagmesh7.mtx $D/small/power.graph $D/small/PGPgiantcompo.graph \
 $D/weighted/rome99.gr $D/weighted/OL.mtx.gz $D/weighted/TG.mtx.gz $D/mesh/delaunay_n15.graph.gz \
 $D/mesh/rgg_n_2_15_s0.graph.gz $D/mesh/delaunay_n16.mtx.gz $D/road/luxembourg_osm.mtx.gz \
 $D/road/USA-road-NY.mtx.gz $D/road/USA-road-BAY.mtx.gz $D/road/USA-road-COL.mtx.gz \
 $D/road/USA-road-FLA.mtx.gz $D/road/USA-road-NW.mtx.gz $D/road/USA-road-NE.mtx.gz \
 $D/social/email-Eu-core.txt.gz $D/social/ego-Facebook-combined.mtx.gz $D/social/p2p-Gnutella08.txt \
 $D/social/Wiki-Vote.txt.gz $D/social/p2p-Gnutella24.txt $D/social/as-caida20071105.mtx.gz \
 $D/social/cit-HepPh.mtx.gz $D/social/email-Enron.mtx.gz $D/social/p2p-Gnutella31.txt.gz \
 $D/social/ego-Twitter.undirected.mtx.gz $D/social/soc-Slashdot0902.directed.mtx.gz \
 $D/social/web-Stanford.relabeled.mtx.gz"
if [ "$part" = corpus ]; then
    what=${1:-bfs}
    if [ "$what" = bfs ]; then
        bench $CORPUS --algo bfs --sources 8 --peers \
            --methods ${METHODS:-algebraic,single_block,persistent,direction_optimized,edge_centric} \
            --json "$OUT/corpus_bfs.json"
    else  # bips98_606 holds negative values: not a graph for SSSP
        bench ${CORPUS/$D\/mtx\/bips98_606.mtx/} --algo sssp --sources 8 --peers \
            --methods ${METHODS:-bellman_ford,delta_stepping,edge_bellman_ford,persistent_bellman_ford,single_block_bellman_ford} \
            --json "$OUT/corpus_sssp.json"
    fi
fi
# Issue 41: what a first call costs on this (fresh) machine. 'first_call warmup' times `gbla
# warmup` into an empty kernel cache (every built-in method) and runs the warm-up's GPU tests;
# 'first_call bfs|sssp' times each method's first call on USA-road-NY in new processes, cold,
# warm and after the warm-up (gbla bench --first-call: BENCHMARKS.md's first_calls tables);
# 'first_call prebuilt' records and builds the modules the methods load ahead of time
# (gbla/_prebuilt.py) and times both searches' first calls with them.
FIRST_BFS=${FIRST_BFS:-algebraic,persistent}
FIRST_SSSP=${FIRST_SSSP:-bellman_ford,delta_stepping,edge_bellman_ford,async_delta_stepping}
if [ "$part" = first_call ]; then
    what=${1:-warmup}
    G=${GRAPH:-$D/road/USA-road-NY.mtx.gz}
    tag=""
    if [ "$what" = warmup ]; then
        cache=$(mktemp -d)
        (time CUPY_CACHE_DIR=$cache python3 -m gbla warmup) 2>&1 | tee "$OUT/warmup_cold.log" | tail -n 6
        rm -rf "$cache"
        python3 -m pytest -q -p no:cacheprovider -n 4 tests/test_warmup.py 2>&1 \
            | tee "$OUT/test_warmup.log" | tail -n 5
    elif [ "$what" = prebuilt ]; then
        # every module the methods load (gbla's kernels and CuPy's own: the hook records
        # them), from a warm-up into an empty cache and each method's command on the
        # first-call graph, compiled for ARCHS (default sm_80, sm_90, sm_100, PTX for
        # compute_80) into .prebuilt, which the first calls below take (cold: empty caches).
        # .prebuilt and the specs come back as prebuilt.tgz; to ship them, pack .prebuilt into
        # the package (gbla/kernels/prebuilt/README.md).
        specs=$(mktemp -d) cache=$(mktemp -d)
        record() { GBLA_KERNEL_SPECS=$specs CUPY_CACHE_DIR=$cache python3 -m gbla "$@"; }
        (time record warmup) 2>&1 | tail -n 5
        for m in ${FIRST_BFS//,/ }; do record bfs "$G" --source 0 --method "$m" >/dev/null; done
        for m in ${FIRST_SSSP//,/ }; do
            record sssp "$G" --source 0 --weights 1 255 --method "$m" >/dev/null
        done
        echo "$(ls "$specs" | wc -l) modules recorded"
        (time python3 tools/build_kernels.py "$specs" --out .prebuilt --clean \
            --arch ${ARCHS:-80 90 100} --ptx ${PTX:-80} --jobs 16) 2>&1 \
            | tee "$OUT/build_kernels.log" | tail -n 5
        du -sh "$specs" .prebuilt
        cp -r "$specs" /tmp/specs && tar czf "$OUT/prebuilt.tgz" .prebuilt -C /tmp specs \
            && du -sh "$OUT/prebuilt.tgz"
        rm -rf /tmp/specs
        export GBLA_PREBUILT=$PWD/.prebuilt
        tag=_prebuilt
    fi
    if [ "$what" = bfs ] || [ "$what" = prebuilt ]; then
        bench "$G" --algo bfs --sources 4 --first-call --methods "$FIRST_BFS" \
            --json "$OUT/first_calls_bfs$tag.json"
    fi
    if [ "$what" = sssp ] || [ "$what" = prebuilt ]; then
        bench "$G" --algo sssp --weights 1 255 --sources 4 --first-call --methods "$FIRST_SSSP" \
            --json "$OUT/first_calls_sssp$tag.json"
    fi
fi
exit "$status"
