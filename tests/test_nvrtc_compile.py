"""The kernel modules compile with NVRTC exactly as the loader hands them to CuPy on the GPU
(prelude, the file with its headers inlined, the generated semiring struct, the name
expressions): the path a device loop takes (loop.cu's test and gather, spmv.cu's device
product) is checked where no GPU is. Skips when cuda-bindings cannot load libnvrtc."""

import numpy as np
import pytest

from gbla import DEFAULT_POLICY, _prebuilt, semirings
from gbla.kernels import _codegen, _launch


def _nvrtc():
    try:
        from cuda.bindings import nvrtc

        err, *_ = nvrtc.nvrtcVersion()
        return nvrtc if err == nvrtc.nvrtcResult.NVRTC_SUCCESS else None
    except Exception:
        return None


NVRTC = _nvrtc()
pytestmark = [pytest.mark.nvcc, pytest.mark.skipif(NVRTC is None, reason="no NVRTC library")]


def _compile(code, names):
    """Lowered names of ``names`` after compiling ``code``; the log on failure."""
    nv = NVRTC
    ok = nv.nvrtcResult.NVRTC_SUCCESS
    err, prog = nv.nvrtcCreateProgram(code.encode(), b"gbla.cu", 0, [], [])
    assert err == ok
    try:
        for name in names:
            assert nv.nvrtcAddNameExpression(prog, name.encode())[0] == ok
        opts = [b"-std=c++17", b"--gpu-architecture=compute_90"] + [
            f"-I{d}".encode() for d in _prebuilt.include_dirs()
        ]
        (err,) = nv.nvrtcCompileProgram(prog, len(opts), opts)
        _, size = nv.nvrtcGetProgramLogSize(prog)
        log = b" " * size
        nv.nvrtcGetProgramLog(prog, log)
        assert err == ok, log.decode(errors="replace")[-4000:]
        return [nv.nvrtcGetLoweredName(prog, name.encode())[1] for name in names]
    finally:
        nv.nvrtcDestroyProgram(prog)


def test_the_loop_kernels_compile_behind_the_direction_rule():
    # the loop's test, the gather of a device product's input, and a run's start (the load of
    # a vector staged on the host) for every dtype a state vector may have
    names = ["gbla_loop_test", "gbla_gather_decide<int>", "gbla_gather_decide<long long>"] + [
        f"gbla_load_staged_{step}<{c}>"
        for step in ("clear", "scatter")
        for c in ("bool", "int", "long long", "float", "double")
    ]
    lowered = _compile(DEFAULT_POLICY.cuda_source() + _launch.source("loop.cu"), names)
    assert lowered[0] == b"gbla_loop_test" and all(lowered)


@pytest.mark.parametrize(
    "semiring, dtype, a_dtype, flip",
    [
        (semirings.any_pair, np.bool_, None, True),  # BFS levels
        (semirings.any_secondi, np.int64, None, True),  # BFS parents
        (semirings.min_plus, np.float64, np.float64, True),  # Bellman-Ford
        (semirings.plus_times, np.float32, np.float32, False),
        (semirings.bor_first, np.int64, None, True),  # BFS from several sources, bits
    ],
    ids=["any_pair", "any_secondi", "min_plus", "plus_times", "bor_first"],
)
# int64 indices for every semiring in `pytest -m exhaustive` (nvcc compiles a sample with both)
@pytest.mark.parametrize("index", ["int", pytest.param("long long", marks=pytest.mark.exhaustive)])
def test_every_spmv_kernel_compiles_for_a_semiring_struct(semiring, dtype, a_dtype, flip, index):
    dtype = np.dtype(dtype)
    types = _codegen.SpmvTypes(
        semiring, None if a_dtype is None else np.dtype(a_dtype), dtype, dtype, flip
    )
    name, struct = _codegen.struct(types)
    names = [f"{k}<{name}, {index}>" for k in _codegen.SPMV_KERNELS]
    lowered = _compile(_launch.source("spmv.cu") + "\n" + struct, names)
    assert all(lowered)


@pytest.mark.parametrize("ctype", ["float", "double"])
def test_the_sssp_kernels_compile_for_each_distance_type(ctype):
    from gbla.kernels import _sssp  # the names the driver asks for, exactly

    names = _sssp.name_expressions(ctype) + (f"gbla_sssp_persistent<{ctype}>",)
    lowered = _compile(_launch.source("sssp.cu"), names)
    assert len(lowered) == len(names) and all(lowered)


def test_the_out_of_core_kernels_compile_with_every_name_the_loader_asks_for():
    from gbla.kernels import _outofcore  # the walks, the selections and the device levels

    names = _outofcore.NAME_EXPRESSIONS
    lowered = _compile(_launch.source("outofcore.cu"), names)
    assert len(lowered) == len(names) and all(lowered)


def test_the_entry_list_kernels_compile_for_the_types_a_loop_stores_and_assigns():
    names = [
        f"gbla_store<{t}, {i}>"
        for t in ("bool", "int", "long long", "float", "double")
        for i in ("int", "long long")
    ]
    names += [
        f"{k}<{t}, {o}>"
        for k in ("gbla_assign_entries", "gbla_entries_merge")
        for t, o in (("long long", "int"), ("bool", "bool"), ("double", "float"))
    ]
    # a bit-parallel search's levels: a loop's iteration into int32 levels at int64 bits
    names += ["gbla_assign_bits<long long, long long, int>", "gbla_assign_bits<int, int, int>"]
    lowered = _compile(_launch.source("entries.cu"), names)
    assert len(lowered) == len(names) and all(lowered)


F8, I4, BOOL = np.dtype(np.float64), np.dtype(np.int32), np.dtype(np.bool_)
I8 = np.dtype(np.int64)


@pytest.mark.parametrize(
    "family, types",
    [
        # Bellman-Ford's round: ewise_mult(t, d, lt), apply(t, identity, mask=~d.S)
        ("map", _codegen.MapTypes(semirings.binary.lt, F8, F8, F8, BOOL)),
        ("map", _codegen.MapTypes(semirings.unary.identity, F8, None, F8, F8)),
        # delta-stepping's buckets: apply(d, div, right=delta), floor; apply(x, minus, left=1)
        ("map", _codegen.MapTypes(semirings.binary.div, F8, F8, F8, F8)),
        ("map", _codegen.MapTypes(semirings.unary.floor, F8, None, F8, F8)),
        ("map", _codegen.MapTypes(semirings.binary.minus, I4, I4, I4, I4, flip=True)),
        ("map", _codegen.MapTypes(semirings.unary.rowindex, I4, None, I4, np.dtype(np.int64))),
        ("select", _codegen.MapTypes(semirings.binary.le, I4, F8, F8, BOOL)),
        ("select", _codegen.MapTypes(semirings.unary.identity, BOOL, None, BOOL, BOOL)),
        ("union", _codegen.MapTypes(semirings.binary.second, F8, F8, F8, F8)),
        ("union", _codegen.MapTypes(semirings.binary.secondi, BOOL, I4, I4, np.dtype(np.int64))),
        ("reduce", _codegen.MapTypes(semirings.binary.min, F8, F8, F8, F8, identity=np.inf)),
        ("reduce", _codegen.MapTypes(semirings.binary.lor, BOOL, BOOL, BOOL, BOOL, identity=False)),
        # the bit-parallel BFS's level: ewise_mult(t, seen, bandnot) and (q, seen, bor)
        ("map", _codegen.MapTypes(semirings.binary.bandnot, I8, I8, I8, I8)),
        ("map", _codegen.MapTypes(semirings.binary.bor, I8, I8, I8, I8)),
    ],
    ids=lambda x: x if isinstance(x, str) else f"{x.op.name}-{x.a_dtype}",
)
def test_the_entry_list_ops_compile_as_the_loader_builds_them(family, types):
    from gbla.kernels import _entries  # the kernel names and struct the launchers ask for

    struct, src = _codegen.map_struct(types)
    names = [f"{k}<{struct}>" for k in _entries._FAMILIES[family]]
    lowered = _compile(_launch.source("entries.cu") + "\n" + src, names)
    assert len(lowered) == len(names) and all(lowered)


def test_the_fused_blocks_unit_compiles_as_cupy_would_compile_it():
    # the block's own translation unit (gbla.kernels._fused: the kernels of a BFS level as
    # device functions, a product's gather and push as one step), through NVRTC
    from gbla.kernels import _fused

    from .test_fused import bfs_like

    program = _fused.Program(bfs_like())
    assert "gbla_fused_push<" in program.source
    _compile(program.source, [])
