"""Direction-optimizing choice between push and pull (Beamer et al., SC'12; GAP; LAGraph): the
one home of that choice, for the algebra and the hand-written kernels alike.

The rule's inputs, defined once:

- frontier vertices (n_f): the entries of the vector being multiplied;
- frontier edges (m_f): the edges leaving them, what a push reads;
- unexplored edges (m_u), counted as GAP counts them: all edges of the matrix a pull reads,
  less the frontier edges of every push step; a frontier that a pull step made is not
  subtracted (GAP resets its scout count after pulling). :class:`DirectionTracker` keeps
  this count across the steps of one traversal.

The rule: from push (or at the start), pull when m_f * alpha >= m_u (alpha_no_exit when the add
monoid has no terminal value, so a pull row cannot stop early; at a tie both read the same
edges and push adds an atomic an edge, so pull); from pull, go back to push when
n_f * beta < n. A policy without memory (``memory=False``, for a relaxation's rounds, which
reach a vertex again and again) decides each step alone: pull when m_f * alpha >= m, every
edge of the matrix, whatever came before. The constants live in a frozen
:class:`DirectionPolicy`; its :meth:`~DirectionPolicy.cuda_source` is the same rule for device
code, generated from it.
:func:`resolve` is the one reading of a ``direction=`` argument. Nothing here reads the
environment.
"""

import functools
from dataclasses import dataclass

from . import _validation as V

__all__ = [
    "DirectionPolicy",
    "DirectionTracker",
    "DEFAULT_POLICY",
    "DIRECTIONS",
    "resolve",
    "start",
]

DIRECTIONS = ("auto", "push", "pull")


@dataclass(frozen=True)
class DirectionPolicy:
    """Constants of the push/pull switch.

    Parameters
    ----------
    alpha : float
        Go from push to pull when m_f * alpha >= m_u and the add monoid has a terminal value
        (early exit). GAP's default, 15.
    alpha_no_exit : float
        The same threshold when pull cannot stop early (e.g. plus_times): pull only when it
        reads no more edges than push, m_f * alpha_no_exit >= m_u (at a tie, a frontier of
        every vertex with an out-edge, push reads the same edges and adds an atomic each:
        PageRank's product on rmat(22), H200, 7.9 ms pushed against 4.1 pulled).
    beta : float
        Go from pull back to push when the frontier has fewer than n / beta entries. GAP's
        default, 18.
    memory : bool
        True (GAP's rule, for a traversal, which reaches a vertex once): a push spends its
        frontier's edges from m_u, and the last choice holds by the hysteresis above. False
        (for a relaxation, whose rounds reach a vertex again and again, so that GAP's count
        would run out and the rule then pull every other round): each step decided alone,
        m_u every edge of the matrix, beta unused.

    Examples
    --------
    >>> from gbla import DirectionPolicy
    >>> DirectionPolicy().choose(None, frontier_vertices=10, frontier_edges=200,
    ...                          unexplored_edges=1500, n=1000, early_exit=True)
    'pull'
    """

    alpha: float = 15.0
    alpha_no_exit: float = 1.0
    beta: float = 18.0
    memory: bool = True

    def __post_init__(self):
        for name in ("alpha", "alpha_no_exit", "beta"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise V.invalid_value(name, "be a positive number", value)
            object.__setattr__(self, name, float(value))
        if not isinstance(self.memory, bool):
            raise V.invalid_value("memory", "be True or False", self.memory)

    def __repr__(self):
        memory = "" if self.memory else ", memory=False"
        return (
            f"DirectionPolicy(alpha={self.alpha!r}, alpha_no_exit={self.alpha_no_exit!r}, "
            f"beta={self.beta!r}{memory})"
        )

    def choose(
        self, previous, *, frontier_vertices, frontier_edges, unexplored_edges, n, early_exit
    ):
        """'push' or 'pull' for one step, given the previous choice (None at the start).

        Computed in double precision, exactly as :meth:`cuda_source`'s device code computes it.
        """
        if previous == "pull" and self.memory:
            return "push" if float(frontier_vertices) * self.beta < float(n) else "pull"
        alpha = self.alpha if early_exit else self.alpha_no_exit
        return "pull" if float(frontier_edges) * alpha >= float(unexplored_edges) else "push"

    def tracker(self):
        """A fresh tracker carrying this policy's hysteresis and GAP's edge count across the
        steps of one traversal."""
        return DirectionTracker(self)

    def cuda_source(self):
        """C++ source of ``struct gbla_direction``, this policy's rule for kernels (and host
        code: its functions are ``__host__ __device__``), constants written exactly:

        - ``bool pull(bool was_pulling, long long frontier_vertices, long long frontier_edges,
          long long unexplored_edges, long long n, bool early_exit)``: true for pull;
        - ``long long unexplored_after(bool was_pulling, bool pulling, long long
          unexplored_edges, long long frontier_edges)``: m_u after the step.

        Made once per policy: kernel lookups key their compiled module on this text.
        """
        return _rule_source(self)


DEFAULT_POLICY = DirectionPolicy()


@functools.lru_cache(maxsize=None)
def _rule_source(policy):
    # without memory: no hysteresis, and m_u never spent (the text of a policy with memory is
    # what it always was: kernels compiled ahead of time are keyed on it)
    hysteresis = (
        "if (was_pulling) return !((double)frontier_vertices * BETA < (double)n);"
        if policy.memory
        else "(void)was_pulling;  // no memory: each step decided alone"
    )
    spent = (
        "(was_pulling || pulling) ? unexplored_edges : unexplored_edges - frontier_edges"
        if policy.memory
        else "unexplored_edges"
    )
    return f"""// Generated by gbla/direction.py from {policy!r}.
struct gbla_direction {{
    static constexpr double ALPHA = {policy.alpha.hex()};
    static constexpr double ALPHA_NO_EXIT = {policy.alpha_no_exit.hex()};
    static constexpr double BETA = {policy.beta.hex()};
    __host__ __device__ static inline bool pull(bool was_pulling, long long frontier_vertices,
                                                long long frontier_edges,
                                                long long unexplored_edges, long long n,
                                                bool early_exit) {{
        {hysteresis}
        return (double)frontier_edges * (early_exit ? ALPHA : ALPHA_NO_EXIT) >=
               (double)unexplored_edges;
    }}
    __host__ __device__ static inline long long unexplored_after(bool was_pulling, bool pulling,
                                                                 long long unexplored_edges,
                                                                 long long frontier_edges) {{
        return {spent};
    }}
}};
"""


class DirectionTracker:
    """The mutable half of the policy for one traversal: the last direction chosen, GAP's count
    of unexplored edges, and a history of choices.

    Pass one as ``direction=`` to the successive ``mxv``/``vxm`` calls of one traversal.
    """

    __slots__ = ("policy", "last", "unexplored", "history")

    def __init__(self, policy=DEFAULT_POLICY):
        if not isinstance(policy, DirectionPolicy):
            raise V.domain("policy", "be a DirectionPolicy", policy)
        self.policy = policy
        self.last = None
        self.unexplored = None  # set from the matrix's edge count at the first step
        self.history = []

    def choose(self, *, frontier_vertices, frontier_edges, edges, n, early_exit):
        """The direction of the next step. ``edges``: all edges a pull of this matrix reads
        (m_u starts there); the other inputs as for :meth:`DirectionPolicy.choose`."""
        if self.unexplored is None:
            self.unexplored = edges
        was_pulling = self.last == "pull"
        choice = self.policy.choose(
            self.last,
            frontier_vertices=frontier_vertices,
            frontier_edges=frontier_edges,
            unexplored_edges=self.unexplored,
            n=n,
            early_exit=early_exit,
        )
        if choice == "push" and not was_pulling and self.policy.memory:
            self.unexplored -= frontier_edges
        self.last = choice
        self.history.append(choice)
        return choice

    def __repr__(self):
        return (
            f"DirectionTracker(last={self.last!r}, unexplored={self.unexplored!r}, "
            f"steps={len(self.history)})"
        )


def resolve(direction, *, trackers=False):
    """The one reading of a ``direction=`` argument: 'push' or 'pull' as given, a
    DirectionPolicy as given, 'auto' as :data:`DEFAULT_POLICY`, and (with ``trackers``) a
    DirectionTracker as given; anything else raises InvalidValue."""
    if isinstance(direction, DirectionPolicy):
        return direction
    if isinstance(direction, DirectionTracker):
        if trackers:
            return direction
        raise V.invalid_value(
            "direction",
            "be 'auto', 'push', 'pull' or a DirectionPolicy "
            "(a tracker belongs to one traversal, which starts its own)",
            direction,
        )
    if isinstance(direction, str) and direction in DIRECTIONS:
        return DEFAULT_POLICY if direction == "auto" else direction
    allowed = "'auto', 'push', 'pull', " + (
        "a DirectionPolicy or a DirectionTracker" if trackers else "or a DirectionPolicy"
    )
    raise V.invalid_value("direction", f"be {allowed}", direction)


def start(direction, *, trackers=False):
    """What the steps of one traversal (or one product) get: a fresh tracker for a policy (or
    'auto'), a given tracker as it is (``trackers``), or the fixed 'push' / 'pull'."""
    d = resolve(direction, trackers=trackers)
    return d.tracker() if isinstance(d, DirectionPolicy) else d
