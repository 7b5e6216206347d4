"""The networkx backend named gbla: registered through its entry points; networkx's own tests
for the breadth-first, shortest-path, component, PageRank, triangle and clustering functions pass
against it (each of the 27 functions it implements runs in gbla there); and on random graphs each
function gives networkx's result, order included where networkx defines one."""

import os
import pickle
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gbla
from gbla.nx import FUNCTIONS

from . import graphs as G
from .conftest import SKIP_NO_GPU

nx = pytest.importorskip("networkx")
nx.config.warnings_to_ignore.add("cache")  # conversions kept on the graphs: expected here

NX_TESTS = [
    "networkx/algorithms/traversal/tests/test_bfs.py",
    "networkx/algorithms/shortest_paths/tests/test_unweighted.py",
    "networkx/algorithms/shortest_paths/tests/test_weighted.py",
    "networkx/algorithms/shortest_paths/tests/test_generic.py",
    "networkx/algorithms/components/tests/test_connected.py",
    "networkx/algorithms/link_analysis/tests/test_pagerank.py",
    "networkx/algorithms/tests/test_cluster.py",
]


def test_networkx_finds_the_backend_through_its_entry_points():
    backends = nx.utils.backends.backends
    assert "gbla" in backends, "pip install -e . registers the networkx.backends entry point"
    info = nx.utils.backends.backend_info["gbla"]
    assert set(info["functions"]) == set(FUNCTIONS)


def test_networkxs_own_tests_pass_against_the_backend():
    root = Path(nx.__file__).parent
    env = dict(os.environ, NETWORKX_TEST_BACKEND="gbla", NETWORKX_FALLBACK_TO_NX="True")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "log_cli=true",
            "--log-cli-level=DEBUG",
            "-n",
            "0",
            *NX_TESTS,
        ],
        cwd=root.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    summary = result.stdout.strip().splitlines()[-1]
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "failed" not in summary and "error" not in summary, summary
    ran = set(re.findall(r"Using backend 'gbla' for call to '(\w+)'", result.stdout))
    assert ran == set(FUNCTIONS), sorted(set(FUNCTIONS) - ran)


# ============================================================================== differential
@st.composite
def nx_graphs(draw, weighted=True):
    g = draw(G.graphs(max_n=15, weights=st.integers(1, 9)))
    # node order differs from the ids
    return G.to_networkx(g, draw(st.booleans()), weighted, draw(st.permutations(range(g.n))))


def both(name, *args, **kwargs):
    """networkx's result and gbla's, lists made of generators."""
    f = getattr(nx, name)
    ours, theirs = f(*args, backend="gbla", **kwargs), f(*args, **kwargs)
    if hasattr(theirs, "__next__"):
        ours, theirs = list(ours), list(theirs)
    return ours, theirs


@G.FIXTURE_OK
@given(H=nx_graphs(), data=st.data())
def test_traversals_equal_networkx_order_included(H, data):
    s = data.draw(st.sampled_from(list(H)))
    for name in ("bfs_edges", "bfs_predecessors", "bfs_successors"):
        ours, theirs = both(name, H, s)
        assert ours == theirs, name
    limit = data.draw(st.integers(0, 4))
    assert both("bfs_edges", H, s, depth_limit=limit)[0] == list(
        nx.bfs_edges(H, s, depth_limit=limit)
    )
    if H.is_directed():
        assert both("bfs_edges", H, s, reverse=True)[0] == list(nx.bfs_edges(H, s, reverse=True))
    sources = data.draw(st.lists(st.sampled_from(list(H)), min_size=1, max_size=3))
    assert both("bfs_layers", H, sources)[0] == list(nx.bfs_layers(H, sources))
    ours, theirs = both("bfs_tree", H, s)
    assert list(ours.edges) == list(theirs.edges) and list(ours) == list(theirs)
    assert both("descendants_at_distance", H, s, limit)[0] == nx.descendants_at_distance(
        H, s, limit
    )


@G.FIXTURE_OK
@given(H=nx_graphs(), data=st.data())
def test_path_lengths_equal_networkx(H, data):
    s, t = data.draw(st.sampled_from(list(H))), data.draw(st.sampled_from(list(H)))
    for name, args in [
        ("single_source_shortest_path_length", (H, s)),
        ("single_target_shortest_path_length", (H, t)),
        ("single_source_dijkstra_path_length", (H, s)),
        ("single_source_bellman_ford_path_length", (H, s)),
        ("multi_source_dijkstra_path_length", (H, {s, t})),
        ("shortest_path", (H, s)),
        ("has_path", (H, s, t)),
    ]:
        ours, theirs = both(name, *args)
        assert ours == theirs, name
        if isinstance(theirs, dict):
            assert list(ours) == list(theirs) or name not in (
                "single_source_shortest_path_length",
                "single_target_shortest_path_length",
            ), name
    for weight in (None, "weight"):
        assert (
            both("shortest_path_length", H, s, weight=weight)
            == (nx.shortest_path_length(H, s, weight=weight),) * 2
        )
        assert both("shortest_path_length", H, target=t, weight=weight)[
            0
        ] == nx.shortest_path_length(H, target=t, weight=weight)
    cutoff = data.draw(st.sampled_from([None, 0, 1, 1.5, 3, -1]))
    ours = dict(nx.all_pairs_shortest_path_length(H, cutoff=cutoff, backend="gbla"))
    theirs = dict(nx.all_pairs_shortest_path_length(H, cutoff=cutoff))
    assert ours == theirs and list(ours) == list(theirs)
    position = {node: i for i, node in enumerate(H)}
    for node, row in ours.items():
        assert len(row) == len(theirs[node])
        # by distance, ties in the graph's node order
        assert list(row) == sorted(theirs[node], key=lambda v: (theirs[node][v], position[v]))
    pred, dist = nx.bellman_ford_predecessor_and_distance(H, s, backend="gbla")
    e_pred, e_dist = nx.bellman_ford_predecessor_and_distance(H, s)
    assert dist == e_dist and {v: sorted(p) for v, p in pred.items()} == {
        v: sorted(p) for v, p in e_pred.items()
    }
    if nx.has_path(H, s, t):
        assert nx.dijkstra_path_length(H, s, t, backend="gbla") == nx.dijkstra_path_length(H, s, t)
    else:
        with pytest.raises(nx.NetworkXNoPath):
            nx.dijkstra_path_length(H, s, t, backend="gbla")


def test_all_pairs_rows_read_like_networkxs_dicts():
    #   "a" -> "b" -> "c"    "d" -> "a"    ("e", 1) alone
    H = nx.DiGraph([("a", "b"), ("b", "c"), ("d", "a")])
    H.add_node(("e", 1))
    ours = dict(nx.all_pairs_shortest_path_length(H, backend="gbla"))
    assert ours == {
        "a": {"a": 0, "b": 1, "c": 2},
        "b": {"b": 0, "c": 1},
        "c": {"c": 0},
        "d": {"d": 0, "a": 1, "b": 2, "c": 3},
        ("e", 1): {("e", 1): 0},
    }
    d = ours["d"]
    assert not isinstance(d, dict) and isinstance(d, Mapping)
    assert len(d) == 4 and list(d) == ["d", "a", "b", "c"] and list(reversed(d)) == list("cbad")
    assert list(d.values()) == [0, 1, 2, 3] and list(d.items())[1] == ("a", 1)
    assert all(type(v) is int for v in d.values())
    assert d["c"] == 3 and d.get("x", -1) == -1 and "a" in d and ("e", 1) not in d
    assert ("a", 1) in d.items() and ("a", 2) not in d.items()
    assert repr(d) == "{'d': 0, 'a': 1, 'b': 2, 'c': 3}" and str(ours["b"]) == "{'b': 0, 'c': 1}"
    for missing in ("x", ("e", 1)):  # not in the graph; in it but not reached
        with pytest.raises(KeyError):
            d[missing]
    assert d == {"c": 3, "b": 2, "a": 1, "d": 0} and d != {"d": 0, "a": 1, "b": 2}
    assert d != {"d": 0, "a": 1, "b": 2, "c": 4} and d != [("d", 0)]
    copied = d.copy()
    assert type(copied) is dict and list(copied.items()) == list(d.items())
    assert d | {"z": 9} == {**copied, "z": 9} and {"z": 9} | d == {"z": 9, **copied}
    assert pickle.loads(pickle.dumps(d)) == d
    with pytest.raises(TypeError):
        d["a"] = 5
    with pytest.raises(TypeError):
        hash(d)
    # cutoff as networkx reads it: a level is listed while cutoff > the level before it
    assert dict(nx.all_pairs_shortest_path_length(H, cutoff=1.5, backend="gbla"))["d"] == {
        "d": 0,
        "a": 1,
        "b": 2,
    }
    assert dict(nx.all_pairs_shortest_path_length(H, cutoff=-1, backend="gbla"))["d"] == {"d": 0}
    assert nx.single_source_shortest_path_length(H, "d", cutoff=1.5, backend="gbla") == {
        "d": 0,
        "a": 1,
        "b": 2,
    }
    assert list(nx.all_pairs_shortest_path_length(nx.Graph(), backend="gbla")) == []


def test_all_pairs_rows_hold_levels_past_255():
    # a path 0 - 1 - ... - 299: levels up to 299 need two bytes a vertex
    H = nx.path_graph(300)
    ours = dict(nx.all_pairs_shortest_path_length(H, backend="gbla"))
    assert ours[0][299] == 299 and ours[299] == dict(nx.single_source_shortest_path_length(H, 299))
    assert list(ours[0].values()) == list(range(300))


@G.FIXTURE_OK
@given(H=nx_graphs(weighted=False))
def test_components_equal_networkx(H):
    U = H.to_undirected() if H.is_directed() else H
    assert both("connected_components", U)[0] == list(nx.connected_components(U))
    if len(U):
        assert both("is_connected", U)[0] == nx.is_connected(U)
        node = next(iter(U))
        assert both("node_connected_component", U, node)[0] == nx.node_connected_component(U, node)


def test_negative_cycles_and_missing_nodes_raise_as_in_networkx():
    #   0 -> 1 (2), 1 -> 2 (-5), 2 -> 1 (1): a negative cycle through 1 and 2
    H = nx.DiGraph()
    H.add_weighted_edges_from([(0, 1, 2), (1, 2, -5), (2, 1, 1)])
    assert nx.negative_edge_cycle(H, backend="gbla") is True
    with pytest.raises(nx.NetworkXUnbounded):
        nx.single_source_bellman_ford_path_length(H, 0, backend="gbla")
    H.remove_edge(2, 1)
    assert nx.negative_edge_cycle(H, backend="gbla") is False
    assert nx.single_source_bellman_ford_path_length(H, 0, backend="gbla") == {0: 0, 1: 2, 2: -3}
    for call in (
        lambda: nx.single_source_shortest_path_length(H, 9, backend="gbla"),
        lambda: nx.dijkstra_path_length(H, 9, 0, backend="gbla"),
        lambda: nx.has_path(H, 0, 9, backend="gbla"),
    ):
        with pytest.raises(nx.NodeNotFound):
            call()
    with pytest.raises(nx.NetworkXError):
        list(nx.bfs_edges(H, 9, backend="gbla"))
    with pytest.raises(nx.NetworkXPointlessConcept):
        nx.is_connected(nx.Graph(), backend="gbla")


def test_what_gbla_cannot_run_says_why():
    H = nx.path_graph(4)
    can_run = gbla.nx.backend_interface.can_run
    assert can_run("single_source_shortest_path_length", (H, 0), {}) is True
    reason = can_run("single_source_dijkstra_path_length", (H, 0), {"weight": lambda *a: 1})
    assert isinstance(reason, str) and "weight function" in reason
    assert "sort_neighbors" in can_run("bfs_edges", (H, 0), {"sort_neighbors": sorted})
    assert "no hits" in can_run("hits", (H,), {})
    assert can_run("pagerank", (H,), {}) is True
    assert "multigraph" in can_run("pagerank", (nx.MultiGraph(H),), {})
    assert "damping" in can_run("pagerank", (H,), {"alpha": 1.5})
    assert "personalization" in can_run("pagerank", (H,), {"personalization": {0: -1}})
    assert "nstart summing to 0" in can_run("pagerank", (H,), {"nstart": {0: 0, 9: 1}})
    assert can_run("triangles", (nx.MultiGraph(H),), {}) is True
    assert "multigraph" in can_run("triangles", (nx.MultiGraph(H),), {"nodes": [0]})
    assert "directed" in can_run("clustering", (nx.DiGraph(H),), {})
    assert "weighted" in can_run("average_clustering", (H,), {"weight": "weight"})


@pytest.mark.gpu
@SKIP_NO_GPU
def test_the_backend_runs_on_the_gpu_with_networkxs_results():
    H = nx.gnp_random_graph(300, 0.02, seed=3, directed=True)
    for u, v in H.edges:
        H[u][v]["weight"] = (u * 7 + v) % 10 + 1
    converted = gbla.nx.backend_interface.convert_from_nx(H, {"weight": 1})
    assert converted.matrix.device == "gpu"
    assert nx.single_source_dijkstra_path_length(
        H, 0, backend="gbla"
    ) == nx.single_source_dijkstra_path_length(H, 0)
    assert list(nx.bfs_edges(H, 0, backend="gbla")) == list(nx.bfs_edges(H, 0))
    assert np.isclose(
        len(list(nx.connected_components(H.to_undirected(), backend="gbla"))),
        nx.number_connected_components(H.to_undirected()),
    )
