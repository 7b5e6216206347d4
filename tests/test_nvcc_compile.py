"""Every .cu file compiles with nvcc for sm_90, standalone and instantiated for the semiring and
dtype combinations the Python side can request (the whole registry, both operand orders, iso
patterns, int32 and int64 indices). Skips only when nvcc is absent. `pytest` compiles every file
to PTX and a sample of each registry; `pytest -m exhaustive` adds every file down to machine code
and each registry whole (about ten CPU-minutes)."""

import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from gbla import DEFAULT_POLICY, DirectionPolicy, semirings
from gbla.kernels import _codegen, _entries, _launch, _outofcore, _sssp

NVCC = shutil.which("nvcc")
pytestmark = [pytest.mark.nvcc, pytest.mark.skipif(NVCC is None, reason="nvcc not found")]
CU_FILES = sorted(_launch.KERNEL_DIR.glob("*.cu"))
EXHAUSTIVE = pytest.mark.exhaustive


def _nvcc(path, *flags):
    result = subprocess.run(
        [NVCC, "-std=c++17", "-arch=sm_90", *flags, str(path)], capture_output=True, text=True
    )
    assert result.returncode == 0, f"nvcc {path.name} failed:\n{result.stderr[-4000:]}"


def test_there_are_kernel_sources():
    assert CU_FILES, "gbla/kernels has no .cu file"


def _translation_unit(path, policy=DEFAULT_POLICY):
    """The file as the loader hands it to NVRTC: headers inlined and, for a file that uses the
    generated direction rule, that rule first."""
    code = _launch.source(path.name)
    return (policy.cuda_source() if "gbla_direction::" in code else "") + code


@pytest.mark.parametrize("path", CU_FILES, ids=lambda p: p.name)
def test_cu_file_compiles_to_ptx_as_the_loader_assembles_it(path, tmp_path):
    # the quick check of every file: front end and NVVM, as NVRTC sees it at run time
    unit = tmp_path / path.name
    unit.write_text(_translation_unit(path))
    _nvcc(unit, "--ptx", "-o", str(tmp_path / "unit.ptx"))


@EXHAUSTIVE
@pytest.mark.parametrize("path", CU_FILES, ids=lambda p: p.name)
def test_cu_file_compiles_standalone(path, tmp_path):
    # as written (headers found by nvcc itself), and as the loader assembles it
    _nvcc(
        path,
        "-c",
        f"-I{_launch.KERNEL_DIR}",
        "-include",
        str(_rule_header(tmp_path)),
        "-o",
        str(tmp_path / "out.o"),
    )
    unit = tmp_path / path.name
    unit.write_text(_translation_unit(path))
    _nvcc(unit, "-c", "-o", str(tmp_path / "unit.o"))


def _rule_header(tmp_path, policy=DEFAULT_POLICY):
    header = tmp_path / "gbla_direction.h"
    header.write_text(policy.cuda_source())
    return header


@EXHAUSTIVE
def test_bfs_compiles_with_a_non_default_direction_policy(tmp_path):
    unit = tmp_path / "bfs.cu"
    unit.write_text(
        _translation_unit(
            _launch.KERNEL_DIR / "bfs.cu", DirectionPolicy(alpha=3.5, alpha_no_exit=0.25, beta=100)
        )
    )
    _nvcc(unit, "-c", "-o", str(tmp_path / "bfs.o"))


def test_spmv_compiles_for_a_type_of_each_add_monoid(tmp_path):
    # the registry's sample: a semiring of each add monoid, its dtypes, operand orders and iso
    # pattern taken in turn, both index types, to PTX
    by_monoid = {}
    for types in _codegen.registry_types([semirings.get(n) for n in semirings.names()]):
        by_monoid.setdefault(types.semiring.add.name, []).append(types)
    path = tmp_path / "spmv_sample.cu"
    path.write_text(
        _codegen.spmv_translation_unit(
            [found[k % len(found)] for k, found in enumerate(by_monoid.values())]
        )
    )
    _nvcc(path, "--ptx", "-o", str(tmp_path / "spmv_sample.ptx"))


@EXHAUSTIVE
def test_spmv_compiles_for_the_whole_registry(tmp_path):
    # Front end and NVVM (to PTX) for every instantiation, split in two to use both cores.
    types = _codegen.registry_types([semirings.get(n) for n in semirings.names()])
    _ptx_on_both_cores(
        tmp_path,
        "spmv_registry",
        [_codegen.spmv_translation_unit(half) for half in (types[::2], types[1::2])],
    )


def _ptx_on_both_cores(tmp_path, stem, units):
    """nvcc --ptx over each translation unit, two at a time."""
    paths = []
    for i, unit in enumerate(units):
        path = tmp_path / f"{stem}_{i}.cu"
        path.write_text(unit)
        paths.append(path)
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda p: _nvcc(p, "--ptx", "-o", str(p.with_suffix(".ptx"))), paths))


@EXHAUSTIVE
def test_spmv_compiles_to_sm90_machine_code_for_one_semiring_per_monoid(tmp_path):
    # Down to SASS (ptxas included) for one semiring per add monoid, every dtype.
    by_monoid = {}
    for name in semirings.names():
        sr = semirings.get(name)
        by_monoid.setdefault(sr.add.name, sr)
    path = tmp_path / "spmv_sass.cu"
    path.write_text(
        _codegen.spmv_translation_unit(_codegen.registry_types(list(by_monoid.values())))
    )
    _nvcc(path, "-c", "-o", str(tmp_path / "spmv_sass.o"))


@pytest.mark.parametrize(
    "stage", ["--ptx", pytest.param("-c", marks=EXHAUSTIVE)], ids=["ptx", "sass"]
)
def test_sssp_compiles_every_instantiation_the_drivers_launch(tmp_path, stage):
    # templates are only parsed until instantiated: take the address of each one, both dtypes
    names = [
        name
        for t in _sssp.CTYPES.values()
        for name in _sssp.name_expressions(t) + tuple(f"{k}<{t}>" for k in _sssp.COOPERATIVE)
    ]
    unit = tmp_path / "sssp_all.cu"
    unit.write_text(
        _translation_unit(_launch.KERNEL_DIR / "sssp.cu")
        + "\nvoid* gbla_all[] = {"
        + ", ".join(f"(void*)&{name}" for name in names)
        + "};\n"
    )
    _nvcc(unit, stage, "-o", str(tmp_path / "sssp_all.out"))


def test_outofcore_compiles_every_instantiation_its_launchers_use(tmp_path):
    unit = tmp_path / "outofcore_all.cu"
    unit.write_text(
        _translation_unit(_launch.KERNEL_DIR / "outofcore.cu")
        + "\nvoid* gbla_all[] = {"
        + ", ".join(f"(void*)&{name}" for name in _outofcore.NAME_EXPRESSIONS)
        + "};\n"
    )
    _nvcc(unit, "-c", "-o", str(tmp_path / "outofcore_all.o"))


def _entry_list_registry():
    """Every struct an element-wise op over entry lists can ask of the builtin ops."""
    return _entries.registry_types(
        vars(semirings.unary).values(),
        vars(semirings.binary).values(),
        vars(semirings.monoid).values(),
        semirings.unary.identity,
    )


@EXHAUSTIVE
def test_the_entries_kernels_compile_for_the_whole_op_registry(tmp_path):
    # front end and NVVM (to PTX) for every op, operand dtype pair, side of a bound scalar and
    # monoid the ops can ask for, and every value and id type of the kernels without a struct;
    # split in two to use both cores
    found = _entry_list_registry()
    _ptx_on_both_cores(
        tmp_path,
        "entries_registry",
        [
            _entries.translation_unit({family: types[k::2] for family, types in found.items()})
            for k in (0, 1)
        ],
    )


@pytest.mark.parametrize(
    "stage", ["--ptx", pytest.param("-c", marks=EXHAUSTIVE)], ids=["ptx", "sass"]
)
def test_the_entries_kernels_compile_for_each_op_family(tmp_path, stage):
    # one op of each shape, every dtype pair: to PTX, and down to SASS (ptxas included)
    ops = {
        "map": semirings.binary.minus,
        "select": semirings.binary.lt,
        "improve": semirings.binary.lt,
        "union": semirings.binary.min,
        "reduce": semirings.monoid.plus.op,
    }
    found = {
        family: [t for t in types if t.op is ops[family] or (family == "map" and t.b_dtype is None)]
        for family, types in _entry_list_registry().items()
    }
    assert all(found.values())
    path = tmp_path / "entries_family.cu"
    path.write_text(_entries.translation_unit(found))
    _nvcc(path, stage, "-o", str(tmp_path / "entries_family.out"))


def test_the_entries_registry_covers_what_the_ops_ask_for():
    # the enumeration must not lose shapes: a unary apply, a scalar on either side, an
    # ewise of mixed dtypes, a select of an int vector by a float thunk, a bool monoid
    found = _entry_list_registry()
    b = semirings.binary
    f8, i4, bl = (np.dtype(t) for t in (np.float64, np.int32, np.bool_))
    assert _codegen.MapTypes(semirings.unary.ainv, i4, None, i4, i4) in found["map"]
    assert _codegen.MapTypes(b.minus, i4, f8, f8, f8, True) in found["map"]
    assert _codegen.MapTypes(b.lt, i4, f8, f8, bl) in found["map"]
    assert _codegen.MapTypes(b.plus, bl, i4, i4, i4) in found["union"]
    assert _codegen.MapTypes(b.le, i4, f8, f8, bl) in found["select"]
    assert _codegen.MapTypes(semirings.unary.identity, f8, None, f8, bl) in found["select"]
    assert _codegen.MapTypes(b.lt, i4, f8, f8, bl) in found["improve"]  # an int t, float out
    lor = semirings.monoid.lor
    assert _codegen.MapTypes(lor.op, bl, bl, bl, bl, identity=False) in found["reduce"]
