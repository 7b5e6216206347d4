"""What `python -m build` makes: an sdist holding the test suite, the examples, the kernels'
sources and the licence (and whose tests run from it), a wheel carrying the licence."""

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("build")
setuptools = pytest.importorskip("setuptools")
if int(setuptools.__version__.split(".")[0]) < 77:
    pytest.skip("setuptools >= 77 reads the SPDX licence", allow_module_level=True)


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    result = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return out


def test_the_sdist_holds_the_tests_the_examples_the_kernels_and_the_licence(dist, tmp_path):
    (sdist,) = dist.glob("gbla-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
        tar.extractall(tmp_path, filter="data")
    for needed in (
        "LICENSE",
        "README.md",
        "tests/conftest.py",
        "tests/graphs.py",
        "examples/bfs_levels.py",
        "examples/sssp_road.py",
        "gbla/kernels/spmv.cu",
        "gbla/kernels/frontier.cuh",
        "pyproject.toml",
    ):
        assert needed in names, needed
    # its own tests run from it: the suite's helpers and the examples import from the sdist
    (root,) = tmp_path.glob("gbla-*")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-n",
            "0",
            "tests/test_layers.py",
            "tests/test_examples.py",
        ],
        cwd=root,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:]


def test_the_wheel_carries_the_licence_and_the_kernels(dist):
    (wheel,) = dist.glob("gbla-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), names
    assert "gbla/kernels/spmv.cu" in names and "gbla/kernels/loop.cu" in names
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("METADATA")))
    assert b"License-Expression: BSD-3-Clause" in metadata
