"""The examples run, at a small size, and check themselves against SciPy (or networkx)."""

import importlib.util
from pathlib import Path

import pytest

from gbla.outofcore import STRATEGIES

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


def test_bfs_levels_runs_and_agrees_with_scipy(device, capsys):
    _load("bfs_levels").main(["--scale", "10", "--sources", "2", "--device", device])
    assert capsys.readouterr().out.count("levels equal to SciPy, parents valid") == 2


def test_sssp_road_runs_and_agrees_with_scipy(device, capsys):
    _load("sssp_road").main(["--grid", "30", "--sources", "2", "--device", device])
    assert capsys.readouterr().out.count("distances equal to SciPy, predecessors valid") == 2


def test_ranking_runs_and_agrees_with_networkx(device, capsys):
    pytest.importorskip("networkx")
    _load("ranking").main(["--scale", "9", "--device", device])
    out = capsys.readouterr().out
    assert out.count("equal to networkx") == 3 and "DIFFERENT" not in out


def test_examples_read_a_real_graph_when_given_one(device, capsys):
    from .conftest import data_file

    path = data_file("mtx/karate.mtx")
    _load("bfs_levels").main([str(path), "--sources", "1", "--device", device])
    _load("sssp_road").main([str(path), "--sources", "1", "--device", device])
    out = capsys.readouterr().out
    assert "parents valid" in out and "predecessors valid" in out


def test_sssp_road_keeps_a_files_weights(device, capsys, tmp_path):
    # DIMACS: 1 -> 2 (7), 2 -> 3 (5): the distances are the file's, not random ones
    path = tmp_path / "tiny.gr"
    path.write_text("p sp 3 2\na 1 2 7\na 2 3 5\n")
    _load("sssp_road").main([str(path), "--sources", "1", "--device", device])
    out = capsys.readouterr().out
    assert "weights: the file's (int64)" in out and "predecessors valid" in out


def test_examples_use_the_public_api_only():
    import ast

    for path in sorted(EXAMPLES.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            for name in names:
                assert not any(part.startswith("_") for part in name.split(".")), (
                    f"{path.name} imports {name}"
                )
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and isinstance(node.value, ast.Name)
                and node.value.id == "gbla"
            ):
                raise AssertionError(f"{path.name} uses gbla.{node.attr}")


def test_out_of_core_runs_every_strategy_and_agrees_with_scipy(capsys):
    _load("out_of_core").main(["--scale", "9"])
    out = capsys.readouterr().out
    # a line per strategy, then gbla.bfs's
    assert out.count("equal to SciPy") == len(STRATEGIES) + 1 and "DIFFERENT" not in out


def test_several_ranks_agree_with_scipy(capsys):
    _load("several_ranks").main(["--scale", "9", "--ranks", "3"])
    assert capsys.readouterr().out.count("equal to SciPy, parents valid") == 3
