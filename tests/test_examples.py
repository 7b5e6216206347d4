"""The examples run, at a small size, and check themselves against SciPy."""

import importlib.util
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_semiring_tour_runs_and_agrees_with_scipy(device, capsys):
    _load("semiring_tour").main(["--scale", "9", "--device", device])
    out = capsys.readouterr().out
    assert "equal to SciPy" in out and "parents" in out
