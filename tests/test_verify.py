"""gbla.verify accepts correct BFS and SSSP results and rejects each kind of corrupted one,
naming the culprit: one test case per rule, each on a small fixture drawn below."""

import numpy as np
import pytest
import scipy.sparse as sp

import gbla

from .conftest import host

# ============================================================================== BFS
#         5 (unreached: nothing leads to it)
#         |
#         v
#   +---> 0 -------> 6
#   |     |  \
#   |     v   v
#   |     1 -> 2         levels: 0 -> 0;  1, 2, 6 -> 1;  3 -> 2;  4 -> 3;  5 -> -1
#   |     | ^  |         one BFS tree: parents = [0, 0, 0, 1, 3, -1, 0] (3's parent may be 2)
#   |     v  \ v
#   |     3 <-\+
#   |     |    \
#   +---- 4 ----+        (4 -> 0 and 4 -> 1 lead back up)
BFS_SRC = [0, 0, 0, 1, 1, 2, 3, 4, 4, 5]
BFS_DST = [1, 2, 6, 2, 3, 3, 4, 0, 1, 0]
LEVELS = [0, 1, 1, 2, 3, -1, 1]
PARENTS = [0, 0, 0, 1, 3, -1, 0]


@pytest.fixture
def bfs_graph(device):
    return gbla.Matrix.from_edges(BFS_SRC, BFS_DST, n=7, device=device)


@pytest.mark.parametrize("direction", ["push", "pull", "auto"])
def test_bfs_results_pass(bfs_graph, direction):
    levels, parents = gbla.bfs(bfs_graph, 0, return_predecessors=True, direction=direction)
    np.testing.assert_array_equal(host(levels), LEVELS)
    gbla.verify.bfs(bfs_graph, 0, levels, parents)  # arrays on the matrix's device
    gbla.verify.bfs(bfs_graph, 0, levels)


@pytest.mark.parametrize("parents", [PARENTS, [0, 0, 0, 2, 3, -1, 0]])
def test_every_valid_bfs_tree_passes(bfs_graph, parents):
    gbla.verify.bfs(bfs_graph, 0, np.array(LEVELS), np.array(parents))
    # A scipy graph and int64 lists are accepted too.
    S = sp.csr_array((np.ones(len(BFS_SRC)), (BFS_SRC, BFS_DST)), shape=(7, 7))
    gbla.verify.bfs(S, 0, np.array(LEVELS, np.int64), np.array(parents, np.int64))


BFS_CORRUPTIONS = {
    # rule: (changes to levels, changes to parents, the message naming the culprit)
    "source not at level 0": ({0: 1}, {}, r"^levels\[source\] must be 0; got 1$"),
    "level below -1": ({5: -2}, {}, r"^levels must be >= -1; got -2$"),
    "edge to an unreached vertex": (
        {4: -1},
        {4: -1},
        r"^edge \(3, 4\) leaves the reached set: level 2 to ",
    ),
    "edge skipping a level": ({3: 3}, {}, r"^edge \(1, 3\) skips a level: 1 -> 3$"),
    "no in-edge from the level above": (
        {4: 2},
        {},
        r"^vertex 4 at level 2 has no in-edge from level 1$",
    ),
    "source not its own parent": ({}, {0: 4}, r"^parents\[source\] must be the source 0; got 4$"),
    "parent out of range": ({}, {2: 7}, r"^parents must hold vertex ids or -1$"),
    "parent below -1": ({}, {2: -3}, r"^parents must hold vertex ids or -1$"),
    "reached without parent": ({}, {3: -1}, r"vertex 3 has level 2 and parent -1$"),
    "unreached with a parent": ({}, {5: 4}, r"vertex 5 has level -1 and parent 4$"),
    # 1 -> 3 -> 4 -> 1 are all edges: only the cycle rule catches it
    "cycle in the tree": (
        {},
        {1: 4, 3: 1, 4: 3},
        r"^the parent tree has a cycle through "
        r"vertex 1$",
    ),
    "tree edge within a level": ({}, {2: 1}, r"^tree edge \(1, 2\) joins levels 1 and 1, "),
    # 4 -> 1 is an edge and 1 -> 4 -> 3 -> 2 -> 0 reaches the source: only the levels differ
    "tree edge up the levels": ({}, {1: 4, 3: 2}, r"^tree edge \(4, 1\) joins levels 3 and 1, "),
    "parent link not an edge": ({}, {3: 6}, r"^parent link \(6, 3\) is not an edge of A$"),
}


@pytest.mark.parametrize("rule", list(BFS_CORRUPTIONS))
def test_a_corrupted_bfs_result_is_rejected(bfs_graph, rule):
    level_changes, parent_changes, message = BFS_CORRUPTIONS[rule]
    levels, parents = np.array(LEVELS), np.array(PARENTS)
    for v, x in level_changes.items():
        levels[v] = x
    for v, x in parent_changes.items():
        parents[v] = x
    if not parent_changes:  # a levels rule: it holds without parents too
        with pytest.raises(gbla.ValidationError, match=message):
            gbla.verify.bfs(bfs_graph, 0, levels)
    with pytest.raises(gbla.ValidationError, match=message):
        gbla.verify.bfs(bfs_graph, 0, levels, parents)


def test_bfs_results_of_the_wrong_shape_are_rejected(bfs_graph):
    with pytest.raises(gbla.ValidationError, match=r"^levels must have shape \(7,\); got \(6,\)"):
        gbla.verify.bfs(bfs_graph, 0, np.array(LEVELS[:-1]))
    with pytest.raises(gbla.ValidationError, match=r"^parents must have shape \(7,\); got \(8,"):
        gbla.verify.bfs(bfs_graph, 0, np.array(LEVELS), np.array(PARENTS + [0]))


def test_a_validation_error_is_an_assertion_error():
    assert issubclass(gbla.ValidationError, AssertionError)
    assert issubclass(gbla.ValidationError, gbla.GblaError)


# ============================================================================== SSSP
#   0 -1-> 1 -2-> 2 -3-> 3 -0-> 4        dist = [0, 1, 3, 6, 6, inf, 8]
#   |             ^ \    ^      |        pred = [0, 0, 1, 2, 3, -1, 2] (2's pred may be 0)
#   +------3------+  5   +--0---+        3 <-> 4 is a zero-weight cycle: 4 -> 3 is tight too
#                     v
#   1 -6-> 3          6 (a sink)         5 -1-> 0 (5 unreached)
SSSP_EDGES = [
    (0, 1, 1.0),
    (0, 2, 3.0),
    (1, 2, 2.0),
    (1, 3, 6.0),
    (2, 3, 3.0),
    (2, 6, 5.0),
    (3, 4, 0.0),
    (4, 3, 0.0),
    (5, 0, 1.0),
]
DIST = [0.0, 1.0, 3.0, 6.0, 6.0, np.inf, 8.0]
PRED = [0, 0, 1, 2, 3, -1, 2]


@pytest.fixture
def sssp_graph(device):
    src, dst, w = zip(*SSSP_EDGES)
    return gbla.Matrix.from_edges(src, dst, np.array(w), n=7, device=device)


@pytest.mark.parametrize("method", ["bellman_ford", "delta_stepping"])
@pytest.mark.parametrize("direction", ["push", "pull", "auto"])
def test_sssp_results_pass(sssp_graph, method, direction):
    dist, pred = gbla.sssp(
        sssp_graph, 0, return_predecessors=True, method=method, direction=direction
    )
    np.testing.assert_array_equal(host(dist), DIST)
    gbla.verify.sssp(sssp_graph, 0, dist, pred)
    gbla.verify.sssp(sssp_graph, 0, dist)


@pytest.mark.parametrize("pred", [PRED, [0, 0, 0, 2, 3, -1, 2]])
def test_every_valid_predecessor_tree_passes(sssp_graph, pred):
    gbla.verify.sssp(sssp_graph, 0, np.array(DIST), np.array(pred))
    src, dst, w = zip(*SSSP_EDGES)
    S = sp.csr_array((np.array(w), (src, dst)), shape=(7, 7))
    gbla.verify.sssp(S, 0, np.array(DIST, np.float32), np.array(pred, np.int64))


SSSP_CORRUPTIONS = {
    # rule: (changes to dist, changes to pred, the message naming the culprit)
    "source not at distance 0": ({0: 1.0}, {}, r"^dist\[source\] must be 0; got 1\.0$"),
    "NaN distance": ({6: np.nan}, {}, r"^dist must hold finite values or \+inf$"),
    "-inf distance": ({6: -np.inf}, {}, r"^dist must hold finite values or \+inf$"),
    "distance too large": (
        {6: 9.0},
        {},
        r"^edge \(2, 6\) of weight 5\.0 relaxes further: "
        r"dist 9\.0 > 3\.0 \+ 5\.0$",
    ),
    "reached vertex reported unreached": (
        {6: np.inf},
        {6: -1},
        r"^edge \(2, 6\) of weight 5\.0 relaxes further",
    ),
    "distance too small": ({6: 7.0}, {}, r"^vertex 6 has dist 7\.0 but no in-edge achieves it$"),
    "source not its own predecessor": ({}, {0: 5}, r"^pred\[source\] must be the source 0; got 5$"),
    "predecessor out of range": ({}, {2: 7}, r"^pred must hold vertex ids or -1$"),
    "reached without predecessor": ({}, {6: -1}, r"vertex 6 has dist 8\.0 and pred -1$"),
    "unreached with a predecessor": ({}, {5: 0}, r"vertex 5 has dist inf and pred 0$"),
    # 3 -> 4 and 4 -> 3 are both tight edges: only the cycle rule catches it
    "cycle in the tree": ({}, {3: 4}, r"^the predecessor tree has a cycle through vertex 3$"),
    "predecessor not an edge": ({}, {6: 1}, r"^predecessor link \(1, 6\) is not an edge of A$"),
    "predecessor not tight": (
        {},
        {3: 1},
        r"^predecessor link \(1, 3\) is not tight: "
        r"1\.0 \+ weight != 6\.0$",
    ),
}


@pytest.mark.parametrize("rule", list(SSSP_CORRUPTIONS))
def test_a_corrupted_sssp_result_is_rejected(sssp_graph, rule):
    dist_changes, pred_changes, message = SSSP_CORRUPTIONS[rule]
    dist, pred = np.array(DIST), np.array(PRED)
    for v, x in dist_changes.items():
        dist[v] = x
    for v, x in pred_changes.items():
        pred[v] = x
    if not pred_changes:  # a distance rule: it holds without predecessors too
        with pytest.raises(gbla.ValidationError, match=message):
            gbla.verify.sssp(sssp_graph, 0, dist)
    with pytest.raises(gbla.ValidationError, match=message):
        gbla.verify.sssp(sssp_graph, 0, dist, pred)


def test_sssp_results_of_the_wrong_shape_are_rejected(sssp_graph):
    with pytest.raises(gbla.ValidationError, match=r"^dist must have shape \(7,\); got \(6,\)"):
        gbla.verify.sssp(sssp_graph, 0, np.array(DIST[:-1]))
    with pytest.raises(gbla.ValidationError, match=r"^pred must have shape \(7,\); got \(6,\)"):
        gbla.verify.sssp(sssp_graph, 0, np.array(DIST), np.array(PRED[:-1]))


def test_rtol_bounds_the_rounding_a_distance_may_carry(sssp_graph):
    # 8 * (1 + 1e-12): a float sum taken in another order, within the default rtol = 1e-9
    dist = np.array(DIST)
    dist[6] = 8.0 * (1 + 1e-12)
    gbla.verify.sssp(sssp_graph, 0, dist, np.array(PRED))
    with pytest.raises(gbla.ValidationError, match=r"^edge \(2, 6\) of weight 5\.0 relaxes"):
        gbla.verify.sssp(sssp_graph, 0, dist, np.array(PRED), rtol=1e-15)
    dist[6] = 8.0 * (1 - 1e-6)
    with pytest.raises(gbla.ValidationError, match=r"^vertex 6 has dist 7\.99"):
        gbla.verify.sssp(sssp_graph, 0, dist, np.array(PRED))


def test_a_bool_graph_weighs_one_per_edge():
    # 0 -> 1 -> 2, unweighted: distances are hop counts
    S = sp.csr_array((np.ones(2, bool), ([0, 1], [1, 2])), shape=(3, 3))
    gbla.verify.sssp(S, 0, np.array([0.0, 1.0, 2.0]), np.array([0, 0, 1]))
    with pytest.raises(gbla.ValidationError, match=r"^vertex 2 has dist 1\.0 but no in-edge"):
        gbla.verify.sssp(S, 0, np.array([0.0, 1.0, 1.0]))
