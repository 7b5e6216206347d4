"""The direction-optimizing policy: its thresholds, its hysteresis, and its use by mxv/vxm."""

import dataclasses

import numpy as np
import pytest

import gbla
from gbla import DirectionPolicy

POLICY = DirectionPolicy(alpha=15, alpha_no_exit=1, beta=18)


def _choose(previous, nf, mf, mu, n=1000, early_exit=True):
    return POLICY.choose(previous, frontier_nvals=nf, frontier_edges=mf, unexplored_edges=mu,
                         n=n, early_exit=early_exit)


def test_push_stays_while_frontier_edges_are_few_and_switches_past_alpha():
    # m_u / alpha = 1500 / 15 = 100: 100 frontier edges stay push, 101 go pull.
    assert _choose(None, 10, 100, 1500) == "push"
    assert _choose("push", 10, 101, 1500) == "pull"


def test_without_early_exit_pull_needs_more_frontier_edges_than_unexplored():
    assert _choose(None, 10, 200, 1500, early_exit=False) == "push"
    assert _choose(None, 10, 1501, 1500, early_exit=False) == "pull"


def test_pull_stays_until_the_frontier_shrinks_below_n_over_beta():
    # n / beta = 1000 / 18 = 55.6: 56 entries stay pull, 55 go back to push.
    assert _choose("pull", 56, 0, 1) == "pull"
    assert _choose("pull", 55, 10**6, 1) == "push"


def test_hysteresis_a_tracker_remembers_its_last_choice():
    tracker = POLICY.tracker()
    stats = dict(frontier_edges=50, unexplored_edges=1500, n=1000, early_exit=True)
    # Same statistics, different answers depending on where the tracker stands.
    assert tracker.choose(frontier_nvals=100, **stats) == "push"
    tracker.last = "pull"
    assert tracker.choose(frontier_nvals=100, **stats) == "pull"
    assert tracker.history == ["push", "pull"]


def test_policy_is_frozen_and_validates_its_constants():
    with pytest.raises(dataclasses.FrozenInstanceError):
        POLICY.alpha = 3
    with pytest.raises(gbla.InvalidValue, match="beta"):
        DirectionPolicy(beta=0)


def test_auto_in_vxm_uses_the_tracker_and_gives_the_same_result_as_both_directions(device):
    # A star: the centre 0 links to 1..199 both ways. From {0}, every leaf is reached.
    n = 200
    src = [0] * (n - 1) + list(range(1, n))
    dst = list(range(1, n)) + [0] * (n - 1)
    A = gbla.Matrix.from_edges(src, dst, device=device)
    q = gbla.Vector.from_coo([0], True, n, device=device)
    tracker = POLICY.tracker()
    w = gbla.vxm(q, A, "any_pair", mask=~q.S, direction=tracker)
    # frontier edges 199 > unexplored (199 leaves' in-edges) / 15: pull.
    assert tracker.history == ["pull"]
    for direction in ("push", "pull", "auto", POLICY):
        assert gbla.vxm(q, A, "any_pair", mask=~q.S, direction=direction).isequal(w)
    assert w.nvals == n - 1


def test_a_leaf_frontier_chooses_push(device):
    n = 200
    src = [0] * (n - 1) + list(range(1, n))
    dst = list(range(1, n)) + [0] * (n - 1)
    A = gbla.Matrix.from_edges(src, dst, device=device)
    q = gbla.Vector.from_coo([5], True, n, device=device)
    tracker = POLICY.tracker()
    gbla.vxm(q, A, "any_pair", mask=~q.S, direction=tracker)
    # one frontier edge against 2 * 198 unexplored / 15: push
    assert tracker.history == ["push"]
    assert np.array_equal(
        np.asarray(gbla.vxm(q, A, "any_pair", direction=tracker).to_coo()[0].tolist()), [0])
