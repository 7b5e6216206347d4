"""Direction-optimizing choice between push and pull (Beamer et al., SC'12; GAP; LAGraph).

Push costs about the edges leaving the frontier (m_f); pull costs about the in-edges of the
outputs the mask allows (m_u), much less when the add monoid has a terminal value and a row can
stop at its first hit. The constants live in a frozen :class:`DirectionPolicy`; the state for
hysteresis (the last choice) lives in a :class:`DirectionTracker` an algorithm carries from
one call to the next. Nothing here reads the environment.
"""

from dataclasses import dataclass

from . import _validation as V

__all__ = ["DirectionPolicy", "DirectionTracker", "DEFAULT_POLICY"]


@dataclass(frozen=True)
class DirectionPolicy:
    """Constants of the push/pull switch.

    Parameters
    ----------
    alpha : float
        Go from push to pull when m_f > m_u / alpha and the add monoid has a terminal value
        (early exit). GAP's default, 15.
    alpha_no_exit : float
        The same threshold when pull cannot stop early (e.g. plus_times): pull only when it
        reads fewer edges than push, m_f > m_u / alpha_no_exit.
    beta : float
        Go from pull back to push when the frontier has fewer than n / beta entries. GAP's
        default, 18.
    """

    alpha: float = 15.0
    alpha_no_exit: float = 1.0
    beta: float = 18.0

    def __post_init__(self):
        for name in ("alpha", "alpha_no_exit", "beta"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise V.invalid_value(name, "be a positive number", value)

    def choose(self, previous, *, frontier_nvals, frontier_edges, unexplored_edges, n,
               early_exit):
        """'push' or 'pull' for one product, given the previous choice (None at the start)."""
        if previous == "pull":
            return "push" if frontier_nvals * self.beta < n else "pull"
        alpha = self.alpha if early_exit else self.alpha_no_exit
        return "pull" if frontier_edges * alpha > unexplored_edges else "push"

    def tracker(self):
        """A fresh tracker carrying this policy's hysteresis across calls."""
        return DirectionTracker(self)


DEFAULT_POLICY = DirectionPolicy()


class DirectionTracker:
    """The mutable half of the policy: the last direction chosen, and a history of choices.

    Pass one as ``direction=`` to successive ``mxv``/``vxm`` calls of one traversal.
    """

    __slots__ = ("policy", "last", "history")

    def __init__(self, policy=DEFAULT_POLICY):
        if not isinstance(policy, DirectionPolicy):
            raise V.domain("policy", "be a DirectionPolicy", policy)
        self.policy = policy
        self.last = None
        self.history = []

    def choose(self, **stats):
        self.last = self.policy.choose(self.last, **stats)
        self.history.append(self.last)
        return self.last

    def __repr__(self):
        return f"DirectionTracker(last={self.last!r}, steps={len(self.history)})"
