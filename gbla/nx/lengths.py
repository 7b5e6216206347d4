"""What the backend's ``all_pairs_shortest_path_length`` yields for each source in place of a
dict: :class:`HopLengths`, a read-only mapping {target: hops} over that source's row of a
multi-source BFS's levels.

networkx's dicts hold n entries a source, n^2 in all (10^8 Python entries for 10,000 vertices,
several seconds and gigabytes to build, whoever computed the lengths). A row here is its levels
(one byte a vertex while every level is below 255) and reads like the dict: the same ``len``,
keys in the same order, ``[]``, ``in``, ``get``, ``==`` with a dict, the same ``repr``. Entries
become Python objects only as they are read.
"""

import array
from collections.abc import ItemsView, KeysView, Mapping, ValuesView

import numpy as np

__all__ = ["HopLengths", "Labels"]

# typecodes of array.array by item size: a row's levels, unsigned, all ones = unreached
_TYPECODES = {
    np.dtype(t).itemsize: code
    for t, code in ((np.uint8, "B"), (np.uint16, "H"), (np.uint32, "I"), (np.uint64, "Q"))
}


class Labels:
    """A graph's node labels, shared by every row of a call: ``index`` (label -> index) and
    ``array``, the labels in index order as an object array (the graph's own node objects,
    as networkx's dicts hold: taking them is no slower than making ints of the indices)."""

    __slots__ = ("index", "array")

    def __init__(self, nodes, index):
        self.index = index
        self.array = np.fromiter(nodes, dtype=object, count=len(nodes))

    def of(self, indices):
        """The labels of an int array of indices, as a list."""
        return self.array[indices].tolist()


class HopLengths(Mapping):
    """{target: hops} from one source, read-only, over that source's row of BFS levels.

    Iterates as the backend's dict would have: by distance, ties in node order (the graph's
    ``list(G)``). ``len``, ``[]`` (KeyError for a node not reached or not in the graph),
    ``in``, ``get``, ``keys``/``values``/``items`` (views, in that order), ``reversed``, ``==``
    with any mapping (a dict compares equal when it holds the same pairs), ``|`` and ``repr``
    behave as a dict's; ``copy()`` gives a dict. It is not a ``dict``: ``isinstance(d, dict)``
    is False, ``json`` wants ``d.copy()``, and nothing can be assigned. ``d.copy()`` and
    ``dict(d.items())`` build a dict at C speed; ``dict(d)`` reads it key by key.

    A row holds its own levels only (n items of the smallest unsigned type that holds the
    deepest level, all ones = unreached) and the labels every row of the call shares; the
    order of the keys is sorted anew (a radix sort) each time they are iterated.
    """

    __slots__ = ("_levels", "_count", "_labels", "_unreached")

    def __init__(self, levels, labels):
        """``levels``: a 1-D unsigned int NumPy array (all ones = unreached), copied."""
        levels = np.ascontiguousarray(levels)
        self._levels = array.array(_TYPECODES[levels.dtype.itemsize], levels.tobytes())
        self._unreached = int(np.iinfo(levels.dtype).max)
        self._count = len(levels) - int(np.count_nonzero(levels == self._unreached))
        self._labels = labels

    @classmethod
    def rows(cls, levels, labels):
        """A HopLengths for each row of ``levels`` (host ints, -1 unreached), in the smallest
        unsigned type that holds the deepest level."""
        deepest = int(levels.max(initial=0))
        dtype = next(
            np.dtype(t)
            for t in (np.uint8, np.uint16, np.uint32, np.uint64)
            if deepest < np.iinfo(t).max
        )
        compact = levels.astype(dtype)  # -1 wraps to all ones
        return [cls(row, labels) for row in compact]

    # ------------------------------------------------------------------ reading one entry
    def __getitem__(self, key):
        hops = self._levels[self._labels.index[key]]  # KeyError (TypeError) as a dict's
        if hops == self._unreached:
            raise KeyError(key)
        return hops

    def __len__(self):
        return self._count

    # ------------------------------------------------------------------ reading them all
    def _order(self):
        """The reached indices by distance, ties by index (unreached, all ones, sort last)."""
        return np.argsort(np.frombuffer(self._levels, self._dtype()), kind="stable")[: self._count]

    def _dtype(self):
        return np.dtype(f"u{self._levels.itemsize}")

    def _keys(self, order=None):
        return self._labels.of(self._order() if order is None else order)

    def _values(self, order=None):
        order = self._order() if order is None else order
        return np.frombuffer(self._levels, self._dtype())[order].tolist()

    def __iter__(self):
        return iter(self._keys())

    def __reversed__(self):
        return reversed(self._keys())

    def keys(self):
        return _Keys(self)

    def values(self):
        return _Values(self)

    def items(self):
        return _Items(self)

    def copy(self):
        """A dict of the same pairs, in the same order."""
        order = self._order()
        return dict(zip(self._keys(order), self._values(order)))

    # ------------------------------------------------------------------ as a dict compares
    def __eq__(self, other):
        if not isinstance(other, Mapping):
            return NotImplemented
        if len(self) != len(other):
            return False
        return self.copy() == (other if isinstance(other, dict) else dict(other.items()))

    def __or__(self, other):
        if not isinstance(other, Mapping):
            return NotImplemented
        merged = self.copy()
        merged.update(other.items())
        return merged

    def __ror__(self, other):
        if not isinstance(other, Mapping):
            return NotImplemented
        merged = dict(other.items())
        merged.update(self.items())
        return merged

    def __repr__(self):
        return repr(self.copy())


class _Keys(KeysView):
    __slots__ = ()

    def __iter__(self):
        return iter(self._mapping._keys())

    def __reversed__(self):
        return reversed(self._mapping._keys())


class _Values(ValuesView):
    __slots__ = ()

    def __iter__(self):
        return iter(self._mapping._values())

    def __reversed__(self):
        return reversed(self._mapping._values())


class _Items(ItemsView):
    __slots__ = ()

    def __iter__(self):
        m = self._mapping
        order = m._order()
        return zip(m._keys(order), m._values(order))

    def __reversed__(self):
        return reversed(list(self))
