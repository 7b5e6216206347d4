"""The package's layers: no import cycle between gbla modules (an import inside a function
counts as much as one at the top), and the arrows point down (no CUDA in the algorithms, no
algebra in the kernels, storage below the operations, the registry below both)."""

import ast
from pathlib import Path

import pytest

import gbla

ROOT = Path(gbla.__file__).parent


def _modules():
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_package)
    return out


MODULES = _modules()


def _ancestors(name):
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _imports(name):
    """Every gbla module ``name`` imports, at any depth of its code, with the packages whose
    ``__init__`` that import runs (those that are not already ancestors of ``name``)."""
    path, is_package = MODULES[name]
    package = name if is_package else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names
            ]
        else:
            continue
        for target in targets:
            while target and target not in MODULES:  # `import gbla.x.y` names a module
                target = target.rpartition(".")[0]
            if not target or not target.startswith("gbla"):
                continue
            own = set(_ancestors(name)) | {name}
            for t in _ancestors(target) + [target]:
                if t not in own:
                    found.add(t)
    return found


GRAPH = {name: _imports(name) for name in MODULES}


def _cycle():
    """One import cycle as a list of modules, or None."""
    state = {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(GRAPH[node]):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state:
                found = visit(nxt, stack)
                if found:
                    return found
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(GRAPH):
        if node not in state:
            found = visit(node, [])
            if found:
                return found
    return None


def test_the_import_graph_sees_the_package():
    assert {"gbla.ops", "gbla.methods", "gbla.kernels._bfs", "gbla.algorithms.bfs"} <= set(GRAPH)
    assert "gbla.methods" in GRAPH["gbla.algorithms.bfs"]
    assert "gbla.kernels._spmv" in GRAPH["gbla.ops"]


def test_no_import_cycle_between_gbla_modules():
    cycle = _cycle()
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def _reaches(start):
    seen, todo = set(), [start]
    while todo:
        for nxt in GRAPH[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def test_algorithms_are_written_against_ops_and_semirings_only():
    # no CUDA, no kernels, no push/pull machinery of their own: ops carry the execution
    for name in GRAPH:
        if name.startswith("gbla.algorithms"):
            direct = {m for m in GRAPH[name] if not m.startswith("gbla.algorithms")}
            assert not {m for m in direct if m.startswith("gbla.kernels")}, name
            assert direct <= {
                "gbla._validation",
                "gbla._backend",
                "gbla.direction",
                "gbla.methods",
                "gbla.ops",
                "gbla.semirings",
                "gbla.matrix",
                "gbla.vector",
                "gbla.scalar",
                "gbla.exceptions",
                "gbla.runtime",
            }, (name, direct)


@pytest.mark.parametrize(
    "lower, upper",
    [
        ("gbla.kernels", "gbla.ops"),  # kernels below the operations
        ("gbla.runtime", "gbla.ops"),  # how ops execute sits below them
        ("gbla.runtime", "gbla.algorithms"),
        ("gbla.kernels", "gbla.runtime"),
        ("gbla.kernels", "gbla.algorithms"),
        ("gbla.outofcore", "gbla.ops"),  # out-of-core traversal: arrays, not the algebra
        ("gbla.outofcore", "gbla.algorithms"),
        ("gbla.distributed", "gbla.ops"),  # several GPUs: arrays and a communicator
        ("gbla.distributed", "gbla.algorithms"),
        ("gbla.methods", "gbla.algorithms"),  # the registry knows neither side
        ("gbla.methods", "gbla.kernels"),
        ("gbla.matrix", "gbla.ops"),  # storage below the operations
        ("gbla.vector", "gbla.ops"),
        ("gbla.scalar", "gbla.ops"),
        ("gbla.scalar", "gbla.vector"),  # a value, below what holds many
        ("gbla._storage", "gbla.matrix"),
        ("gbla.direction", "gbla.ops"),
        ("gbla.semirings", "gbla.matrix"),
        ("gbla._validation", "gbla.semirings"),
    ],
)
def test_arrows_point_down(lower, upper):
    reached = {
        m for name in GRAPH if name == lower or name.startswith(lower + ".") for m in _reaches(name)
    }
    assert not any(m == upper or m.startswith(upper + ".") for m in reached), (
        f"{lower} reaches {upper}"
    )
