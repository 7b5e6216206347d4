"""The direction-optimizing policy: its thresholds, its hysteresis, GAP's count of unexplored
edges, the one reading of ``direction=``, the device version of the rule (compiled with the host
C++ compiler here, with NVRTC on the GPU) against the Python rule, and its use by mxv/vxm."""

import dataclasses
import shutil
import subprocess

import numpy as np
import pytest

import gbla
from gbla import DEFAULT_POLICY, DirectionPolicy, DirectionTracker
from gbla import direction as D

from .conftest import SKIP_NO_GPU

POLICY = DirectionPolicy(alpha=15, alpha_no_exit=1, beta=18)


def _choose(previous, nf, mf, mu, n=1000, early_exit=True):
    return POLICY.choose(
        previous,
        frontier_vertices=nf,
        frontier_edges=mf,
        unexplored_edges=mu,
        n=n,
        early_exit=early_exit,
    )


def test_push_stays_while_frontier_edges_are_few_and_switches_past_alpha():
    # m_u / alpha = 1500 / 15 = 100: 99 frontier edges stay push, 100 go pull.
    assert _choose(None, 10, 99, 1500) == "push"
    assert _choose("push", 10, 100, 1500) == "pull"


def test_without_early_exit_pull_needs_as_many_frontier_edges_as_unexplored():
    # at a tie (every edge leaves the frontier) both read the same edges: pull, no atomics
    assert _choose(None, 10, 200, 1500, early_exit=False) == "push"
    assert _choose(None, 10, 1499, 1500, early_exit=False) == "push"
    assert _choose(None, 10, 1500, 1500, early_exit=False) == "pull"


def test_pull_stays_until_the_frontier_shrinks_below_n_over_beta():
    # n / beta = 1000 / 18 = 55.6: 56 entries stay pull, 55 go back to push.
    assert _choose("pull", 56, 0, 1) == "pull"
    assert _choose("pull", 55, 10**6, 1) == "push"


def test_hysteresis_a_tracker_remembers_its_last_choice():
    tracker = POLICY.tracker()
    stats = dict(frontier_edges=50, edges=1500, n=1000, early_exit=True)
    # Same statistics, different answers depending on where the tracker stands.
    assert tracker.choose(frontier_vertices=100, **stats) == "push"
    tracker.last = "pull"
    assert tracker.choose(frontier_vertices=100, **stats) == "pull"
    assert tracker.history == ["push", "pull"]


def test_tracker_counts_unexplored_edges_as_gap_does():
    # m_u starts at every edge, loses the frontier edges of each push step, and keeps them
    # for pull steps and for the push step right after a pull (GAP resets its scout count).
    tracker = POLICY.tracker()
    step = dict(n=1000, edges=3000, early_exit=True)
    assert tracker.choose(frontier_vertices=1, frontier_edges=100, **step) == "push"
    assert tracker.unexplored == 2900
    # 200 * 15 = 3000 > 2900: pull, nothing subtracted
    assert tracker.choose(frontier_vertices=300, frontier_edges=200, **step) == "pull"
    assert tracker.unexplored == 2900
    # 50 * 18 = 900 < 1000: back to push, and the frontier a pull made is not subtracted
    assert tracker.choose(frontier_vertices=50, frontier_edges=40, **step) == "push"
    assert tracker.unexplored == 2900
    assert tracker.choose(frontier_vertices=5, frontier_edges=10, **step) == "push"
    assert tracker.unexplored == 2890
    assert tracker.history == ["push", "pull", "push", "push"]


def test_resolve_is_the_one_reading_of_direction():
    assert D.resolve("auto") is DEFAULT_POLICY
    assert D.resolve("push") == "push" and D.resolve("pull") == "pull"
    assert D.resolve(POLICY) is POLICY
    tracker = POLICY.tracker()
    assert D.resolve(tracker, trackers=True) is tracker
    with pytest.raises(gbla.InvalidValue, match="a tracker belongs to one traversal"):
        D.resolve(tracker)
    for bad in ("sideways", None, 1, "Push"):
        with pytest.raises(
            gbla.InvalidValue, match="^direction must be 'auto', 'push', 'pull', or a Dir"
        ):
            D.resolve(bad)
        with pytest.raises(gbla.InvalidValue, match="'pull', a DirectionPolicy or a DirectionT"):
            D.resolve(bad, trackers=True)
    assert isinstance(D.start("auto"), DirectionTracker)
    assert D.start(POLICY).policy is POLICY
    assert D.start("pull") == "pull"


# Inputs at and around every threshold, plus random ones, for the device rule's tests.
def _rule_cases(policy, seed=0):
    rng = np.random.default_rng(seed)
    cases = []
    for was in (0, 1):
        for early in (0, 1):
            alpha = policy.alpha if early else policy.alpha_no_exit
            for mf in (0, 1, 7, 100, 12345, 10**9):
                mu_at = int(mf * alpha)
                for mu in (0, mu_at - 1, mu_at, mu_at + 1, 10**12):
                    for nf, n in ((1, 18), (1, 19), (55, 1000), (56, 1000), (10**6, 10**7)):
                        cases.append((was, nf, mf, max(mu, 0), n, early))
    for _ in range(300):
        cases.append(
            (
                int(rng.integers(2)),
                int(rng.integers(0, 10**6)),
                int(rng.integers(0, 10**7)),
                int(rng.integers(0, 10**8)),
                int(rng.integers(1, 10**7)),
                int(rng.integers(2)),
            )
        )
    return cases


def _python_rule(policy, case):
    was, nf, mf, mu, n, early = case
    choice = policy.choose(
        "pull" if was else "push",
        frontier_vertices=nf,
        frontier_edges=mf,
        unexplored_edges=mu,
        n=n,
        early_exit=bool(early),
    )
    pulling = choice == "pull"
    after = mu if (was or pulling or not policy.memory) else mu - mf
    return int(pulling), after


POLICIES = [
    DEFAULT_POLICY,
    DirectionPolicy(alpha=3.7, alpha_no_exit=0.3, beta=101.25),
    DirectionPolicy(alpha_no_exit=64.0, memory=False),
]

_HARNESS = r"""
#include <cstdio>
#define __host__
#define __device__
%s
int main() {
    int was, early; long long nf, mf, mu, n;
    while (std::scanf("%%d %%lld %%lld %%lld %%lld %%d", &was, &nf, &mf, &mu, &n, &early) == 6) {
        bool pull = gbla_direction::pull(was, nf, mf, mu, n, early);
        std::printf("%%d %%lld\n", (int)pull,
                    gbla_direction::unexplored_after(was, pull, mu, mf));
    }
    return 0;
}
"""


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs a host C++ compiler (g++)")
@pytest.mark.parametrize("policy", POLICIES, ids=repr)
def test_generated_device_rule_matches_the_policy_compiled_on_the_host(policy, tmp_path):
    source = tmp_path / "rule.cpp"
    source.write_text(_HARNESS % policy.cuda_source())
    binary = tmp_path / "rule"
    subprocess.run(["g++", "-std=c++17", "-O1", "-o", str(binary), str(source)], check=True)
    cases = _rule_cases(policy)
    stdin = "\n".join(" ".join(str(x) for x in case) for case in cases) + "\n"
    out = subprocess.run(
        [str(binary)], input=stdin, capture_output=True, text=True, check=True
    ).stdout.split("\n")
    for case, line in zip(cases, out):
        assert tuple(int(x) for x in line.split()) == _python_rule(policy, case), case
    assert len([line for line in out if line]) == len(cases)


@SKIP_NO_GPU
@pytest.mark.gpu
@pytest.mark.parametrize("policy", POLICIES, ids=repr)
def test_generated_device_rule_matches_the_policy_on_the_gpu(policy):
    import cupy as cp

    kernel = cp.RawKernel(
        policy.cuda_source()
        + r"""
extern "C" __global__ void rule(const long long* c, int m, long long* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    const long long* x = c + 6 * i;
    bool pull = gbla_direction::pull(x[0], x[1], x[2], x[3], x[4], x[5]);
    out[2 * i] = pull;
    out[2 * i + 1] = gbla_direction::unexplored_after(x[0], pull, x[3], x[2]);
}""",
        "rule",
        options=("-std=c++17",),
    )
    cases = _rule_cases(policy, seed=1)
    c = cp.asarray(np.array(cases, np.int64).ravel())
    out = cp.zeros(2 * len(cases), np.int64)
    kernel(((len(cases) + 127) // 128,), (128,), (c, np.int32(len(cases)), out))
    got = out.get().reshape(-1, 2)
    for case, row in zip(cases, got):
        assert tuple(int(x) for x in row) == _python_rule(policy, case), case


def test_a_policy_without_memory_decides_each_step_alone():
    policy = DirectionPolicy(alpha_no_exit=10.0, memory=False)
    tracker = policy.tracker()
    steps = [(5, 20), (5000, 200), (5000, 200), (3, 9), (400, 100), (10, 100)]
    got = [
        tracker.choose(
            frontier_vertices=nf, frontier_edges=mf, edges=1000, n=10**6, early_exit=False
        )
        for nf, mf in steps
    ]
    # pull exactly where m_f * 10 >= 1000, every edge: no hysteresis (a pulled step's small
    # frontier does not keep pulling) and nothing spent (the pushes' edges never add up)
    assert got == ["push", "pull", "pull", "push", "pull", "pull"]
    assert tracker.unexplored == 1000
    assert "memory=False" in repr(policy) and "memory" not in repr(DEFAULT_POLICY)
    assert "unexplored_edges - frontier_edges" not in policy.cuda_source()
    with pytest.raises(gbla.InvalidValue, match="memory"):
        DirectionPolicy(memory=1)


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
    # frontier edges 199 > unexplored (all 398 edges at the first step) / 15: pull.
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
    # one frontier edge against 2 * 199 unexplored / 15: push
    assert tracker.history == ["push"]
    assert np.array_equal(
        np.asarray(gbla.vxm(q, A, "any_pair", direction=tracker).to_coo()[0].tolist()), [0]
    )
