"""Sphinx directives that show what a command prints, run when the page is built.

``gbla-example``  an example script of examples/: its source, the command line and what it
                  printed (run on the CPU, at the size the page asks for).
``gbla-command``  any command line run from the repository root and its output, so a page that
                  claims what ``gbla methods`` lists shows the listing itself.
``gbla-semiring-table``  the builtin semirings, read from gbla.semirings when the page is built.

And, when the build starts, docs/_generated/benchmarks.md: BENCHMARKS.md (which
tools/benchmarks_md.py generates) made to sit inside the docs, included by benchmarks.md. Its
charts are pointed at benchmarks/results/ and its links to repository files shown as paths.

A command that fails (non-zero exit status, or no output) is a build warning, which CI turns
into an error: an example that stops working breaks the docs build.
"""

import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

LOG = logging.getLogger(__name__)
ROOT = Path(__file__).resolve().parents[2]


def _run(argv, timeout, env_extra):
    env = dict(os.environ, PYTHONPATH=str(ROOT), **env_extra)
    env.setdefault("PYTHONHASHSEED", "0")
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    return proc, time.perf_counter() - t0


class _Runs(SphinxDirective):
    has_content = False
    option_spec = {"timeout": directives.positive_int, "no-source": directives.flag}

    def _output(self, shown, argv):
        env_extra = self.config.gbla_examples_env
        try:
            proc, seconds = _run(argv, self.options.get("timeout", 300), env_extra)
        except subprocess.TimeoutExpired:
            LOG.warning("%s: timed out", shown, location=self.get_location())
            return []
        out = proc.stdout.rstrip()
        if proc.returncode != 0 or not out:
            LOG.warning(
                "%s: exit status %d, stderr:\n%s",
                shown,
                proc.returncode,
                proc.stderr[-2000:],
                location=self.get_location(),
            )
        LOG.info("%s: %.1f s", shown, seconds)
        block = nodes.literal_block(out, out, language="none")
        block["classes"].append("gbla-output")
        return [block]


class ExampleDirective(_Runs):
    """``.. gbla-example:: bfs_levels.py --scale 12``: source, command, output."""

    required_arguments = 1
    final_argument_whitespace = True

    def run(self):
        words = shlex.split(self.arguments[0])
        script = Path(self.config.gbla_examples_dir) / words[0]
        self.env.note_dependency(str(script))
        rel = script.relative_to(ROOT).as_posix()
        shown = " ".join(["python", rel, *words[1:]])
        out = []
        if "no-source" not in self.options:
            source = script.read_text()
            code = nodes.literal_block(source, source, language="python")
            out.append(nodes.rubric("", f"{rel}"))
            out.append(code)
        out.append(nodes.rubric("", "Output (run when these pages were built, on the CPU)"))
        cmd = nodes.literal_block(f"$ {shown}", f"$ {shown}", language="console")
        out.append(cmd)
        return out + self._output(shown, [sys.executable, str(script), *words[1:]])


class CommandDirective(_Runs):
    """``.. gbla-command:: gbla methods``: the command line and its output."""

    required_arguments = 1
    final_argument_whitespace = True

    def run(self):
        shown = self.arguments[0]
        words = shlex.split(shown)
        if words[0] == "gbla":  # the command as installed, or as a module where it is not
            words = [sys.executable, "-m", "gbla", *words[1:]]
        elif words[0] == "python":
            words = [sys.executable, *words[1:]]
        cmd = nodes.literal_block(f"$ {shown}", f"$ {shown}", language="console")
        return [cmd] + self._output(shown, words)


class SemiringTableDirective(SphinxDirective):
    """``.. gbla-semiring-table::``: every builtin semiring, its add monoid, its multiply's CUDA
    expression and its dtypes, as the registry holds them."""

    def run(self):
        from gbla import semirings

        rows = [
            ".. list-table::",
            "   :header-rows: 1",
            "   :widths: 20 12 40 28",
            "",
            "   * - semiring",
            "     - add",
            "     - multiply (CUDA, in x and y)",
            "     - dtypes",
        ]
        for name in semirings.names():
            sr = semirings.get(name)
            dtypes = ", ".join(str(d) for d in sr.dtypes)
            rows += [
                f"   * - ``{name}``",
                f"     - ``{sr.add.name}``",
                f"     - ``{sr.multiply.cuda}``",
                f"     - {dtypes}",
            ]
        return self.parse_text_to_nodes("\n".join(rows))


_LINK = re.compile(r"(?<!!)\[([^\]]*)\]\(([^)#][^)]*)\)")  # [text](target), not an image
_IMAGE = re.compile(r"!\[([^\]]*)\]\((?!/|https?:)([^)]*)\)")


def _benchmarks_page(app):
    """BENCHMARKS.md without its title, images relative to the repository root made absolute
    from the docs' root, and links to repository files (not pages here) made code spans."""
    text = (ROOT / "BENCHMARKS.md").read_text()
    lines = text.splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    text = "\n".join(lines) + "\n"
    text = _IMAGE.sub(lambda m: f"![{m[1]}](/../{m[2]})", text)

    def link(m):
        target = m[2]
        if target.startswith(("http://", "https://")):
            return m[0]
        return m[1] if m[1].startswith("`") else f"`{m[1]}`"

    text = _LINK.sub(link, text)
    out = Path(app.srcdir) / "_generated" / "benchmarks.md"
    out.parent.mkdir(exist_ok=True)
    if not out.exists() or out.read_text() != text:  # unchanged: the page is not rebuilt
        out.write_text(text)


def setup(app):
    app.add_config_value("gbla_examples_dir", str(ROOT / "examples"), "env")
    app.add_config_value("gbla_examples_env", {}, "env")
    app.add_directive("gbla-example", ExampleDirective)
    app.add_directive("gbla-command", CommandDirective)
    app.add_directive("gbla-semiring-table", SemiringTableDirective)
    app.connect("builder-inited", _benchmarks_page)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
