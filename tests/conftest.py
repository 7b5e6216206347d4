"""Shared fixtures: the devices to run on (the GPU half skips without CuPy and a device), host
conversion, and the hypothesis profile."""

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

import gbla
from gbla._backend import to_host


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """A worker per core, a file a worker (-n auto --dist loadfile), where pytest-xdist is
    installed and no -n was given: pyproject's addopts leave the option out, which a pytest
    without xdist would refuse (it then runs the suite in one process)."""
    if not config.pluginmanager.hasplugin("xdist") or hasattr(config, "workerinput"):
        return
    if config.getoption("numprocesses", None) is None:
        config.option.numprocesses = "auto"
        if config.option.dist == "no":
            config.option.dist = "loadfile"


GPU = gbla.gpu_available()
SKIP_NO_GPU = pytest.mark.skipif(not GPU, reason="needs CuPy and a CUDA device")


def _gpu_count():
    if not GPU:
        return 0
    import cupy

    return cupy.cuda.runtime.getDeviceCount()


GPUS = _gpu_count()
# several GPUs of one host (the multi-GPU runs of gbla.distributed: NCCL between them)
SKIP_ONE_GPU = pytest.mark.skipif(GPUS < 2, reason="needs two CUDA devices")
SKIP_FEWER_THAN_FOUR_GPUS = pytest.mark.skipif(GPUS < 4, reason="needs four CUDA devices")
DEVICES = ["cpu", pytest.param("gpu", marks=[SKIP_NO_GPU, pytest.mark.gpu])]
DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
if os.environ.get("GBLA_DATA"):
    DATA = Path(os.environ["GBLA_DATA"])

settings.register_profile(
    "default", deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("default")


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


def host(a):
    """A NumPy copy of a NumPy or CuPy array."""
    return np.asarray(to_host(a))


NO_DATA = "not found under"  # the skip reason of a test whose graph file is absent


def data_file(relative):
    """Path of a file in ../shared/data (or $GBLA_DATA), skipping the test when it is absent."""
    path = DATA / relative
    if not path.exists():
        pytest.skip(f"{relative} {NO_DATA} {DATA} (set GBLA_DATA to the data folder)")
    return path


def pytest_terminal_summary(terminalreporter):
    """Say how many tests skipped for want of the shared graph files, and where they were
    looked for: a silent skip would hide that the real-graph tests did not run."""
    skipped = terminalreporter.stats.get("skipped", [])
    missing = [r for r in skipped if NO_DATA in str(getattr(r, "longrepr", ""))]
    if missing:
        terminalreporter.write_line(
            f"{len(missing)} tests skipped: graph files not found under {DATA} "
            "(set GBLA_DATA to the folder holding road/, social/, mtx/ ...)",
            yellow=True,
        )
    else:
        terminalreporter.write_line(f"real-graph tests read {DATA}")
