"""Every .cu file compiles with nvcc for sm_90, standalone and instantiated for the semiring and
dtype combinations the Python side can request (the whole registry, both operand orders, iso
patterns, int32 and int64 indices). Skips only when nvcc is absent."""

import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from gbla import DEFAULT_POLICY, DirectionPolicy, semirings
from gbla.kernels import _codegen, _launch, _sssp

NVCC = shutil.which("nvcc")
pytestmark = [pytest.mark.nvcc, pytest.mark.skipif(NVCC is None, reason="nvcc not found")]
CU_FILES = sorted(_launch.KERNEL_DIR.glob("*.cu"))


def _nvcc(path, *flags):
    result = subprocess.run([NVCC, "-std=c++17", "-arch=sm_90", *flags, str(path)],
                            capture_output=True, text=True)
    assert result.returncode == 0, f"nvcc {path.name} failed:\n{result.stderr[-4000:]}"


def test_there_are_kernel_sources():
    assert CU_FILES, "gbla/kernels has no .cu file"


def _translation_unit(path, policy=DEFAULT_POLICY):
    """The file as the loader hands it to NVRTC: headers inlined and, for a file that uses the
    generated direction rule, that rule first."""
    code = _launch.source(path.name)
    return (policy.cuda_source() if "gbla_direction::" in code else "") + code


@pytest.mark.parametrize("path", CU_FILES, ids=lambda p: p.name)
def test_cu_file_compiles_standalone(path, tmp_path):
    # as written (headers found by nvcc itself), and as the loader assembles it
    _nvcc(path, "-c", f"-I{_launch.KERNEL_DIR}", "-include", str(_rule_header(tmp_path)),
          "-o", str(tmp_path / "out.o"))
    unit = tmp_path / path.name
    unit.write_text(_translation_unit(path))
    _nvcc(unit, "-c", "-o", str(tmp_path / "unit.o"))


def _rule_header(tmp_path, policy=DEFAULT_POLICY):
    header = tmp_path / "gbla_direction.h"
    header.write_text(policy.cuda_source())
    return header


def test_bfs_compiles_with_a_non_default_direction_policy(tmp_path):
    unit = tmp_path / "bfs.cu"
    unit.write_text(_translation_unit(_launch.KERNEL_DIR / "bfs.cu",
                                      DirectionPolicy(alpha=3.5, alpha_no_exit=0.25, beta=100)))
    _nvcc(unit, "-c", "-o", str(tmp_path / "bfs.o"))


def test_spmv_compiles_for_the_whole_registry(tmp_path):
    # Front end and NVVM (to PTX) for every instantiation, split in two to use both cores.
    types = _codegen.registry_types([semirings.get(n) for n in semirings.names()])
    halves = [types[::2], types[1::2]]
    paths = []
    for i, half in enumerate(halves):
        path = tmp_path / f"spmv_registry_{i}.cu"
        path.write_text(_codegen.spmv_translation_unit(half))
        paths.append(path)
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda p: _nvcc(p, "--ptx", "-o", str(p.with_suffix(".ptx"))), paths))


def test_spmv_compiles_to_sm90_machine_code_for_one_semiring_per_monoid(tmp_path):
    # Down to SASS (ptxas included) for one semiring per add monoid, every dtype.
    by_monoid = {}
    for name in semirings.names():
        sr = semirings.get(name)
        by_monoid.setdefault(sr.add.name, sr)
    path = tmp_path / "spmv_sass.cu"
    path.write_text(_codegen.spmv_translation_unit(
        _codegen.registry_types(list(by_monoid.values()))))
    _nvcc(path, "-c", "-o", str(tmp_path / "spmv_sass.o"))


def test_sssp_compiles_every_instantiation_the_drivers_launch(tmp_path):
    # templates are only parsed until instantiated: take the address of each one, both dtypes
    names = [name for t in _sssp.CTYPES.values()
             for name in _sssp.name_expressions(t) + tuple(f"{k}<{t}>" for k in _sssp.COOPERATIVE)]
    unit = tmp_path / "sssp_all.cu"
    unit.write_text(_translation_unit(_launch.KERNEL_DIR / "sssp.cu") + "\nvoid* gbla_all[] = {"
                    + ", ".join(f"(void*)&{name}" for name in names) + "};\n")
    _nvcc(unit, "-c", "-o", str(tmp_path / "sssp_all.o"))
