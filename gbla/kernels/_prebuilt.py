"""Kernel modules compiled ahead of time, so that a first call loads machine code instead of
running NVRTC (issue 41: 4-15 s a method on a fresh machine).

Every module the loader (:mod:`._launch`) builds is named by a key of everything its compile
reads: the code (prelude, the file with its headers inlined, epilogue), the options, the name
expressions and whether it is linked for cooperative launches. Before compiling, the loader
asks :func:`find` for that key and the device's architecture: a prebuilt cubin, with the lowered
(mangled) names of its name expressions kept beside it, is loaded as it is. Anything missing,
unreadable or refused by the driver: NVRTC compiles it, as before.

Where prebuilt modules come from:

- with ``GBLA_KERNEL_SPECS=DIR`` in the environment the loader writes the spec of each module
  it builds into DIR (:func:`record`: the code and its names as JSON), so that running the
  methods once (``gbla warmup``, a test suite) lists what they load;
- :func:`build` (``python tools/build_kernels.py DIR --out OUT --arch 80 90 100 --ptx 100``)
  compiles each spec with NVRTC for those architectures: ``KEY.sm_XX.cubin``, PTX for newer
  GPUs (``KEY.compute_XX.ptx``, which the driver compiles on load) and ``KEY.json``;
- the loader looks in the folders of ``GBLA_PREBUILT`` (``os.pathsep``-separated), then in
  the package's own ``kernels/prebuilt``.

Cooperative modules (CuPy links them with the device runtime) are recorded but not built:
they always compile with NVRTC.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any, NamedTuple

__all__ = ["FORMAT", "Prebuilt", "key", "folders", "find", "record", "build", "include_dirs"]

FORMAT = 1  # bumped when what a key covers or the files' layout changes
PACKAGE_DIR = Path(__file__).parent / "prebuilt"
SPECS_ENV, PREBUILT_ENV = "GBLA_KERNEL_SPECS", "GBLA_PREBUILT"


class Prebuilt(NamedTuple):
    """A module found prebuilt: its cubin's path, and each name expression's lowered name."""

    path: Path
    names: dict


def key(code: str, options: Any, name_expressions: Any, cooperative: bool) -> str:
    """The module's name among prebuilt ones: a SHA-256 over everything its compile reads."""
    h = hashlib.sha256()
    parts = (
        f"gbla-kernel/{FORMAT}",
        code,
        "\0".join(options),
        "\0".join(name_expressions or ()),
        "cooperative" if cooperative else "plain",
    )
    for part in parts:
        h.update(part.encode())
        h.update(b"\0\1")  # no two splits of the same text give one key
    return h.hexdigest()[:40]


def folders() -> list[Path]:
    """Where prebuilt modules are looked for, in order: ``GBLA_PREBUILT``'s folders, then the
    package's own; only those that exist."""
    named = [Path(p) for p in os.environ.get(PREBUILT_ENV, "").split(os.pathsep) if p]
    return [f for f in [*named, PACKAGE_DIR] if f.is_dir()]


def find(module_key: str, arch: str) -> Prebuilt | None:
    """The prebuilt module of ``module_key`` for compute capability ``arch`` ('90'), or None:
    its cubin for that architecture, else PTX of the newest virtual architecture not past it
    (the driver compiles that on load, far faster than NVRTC). A folder whose index of names
    is missing or unreadable is passed over."""
    for folder in folders():
        meta = folder / f"{module_key}.json"
        binary = _binary(folder, module_key, int(arch))
        if binary is None or not meta.is_file():
            continue
        try:
            facts = json.loads(meta.read_text())
        except (OSError, ValueError):
            continue
        if facts.get("format") == FORMAT and facts.get("key") == module_key:
            return Prebuilt(binary, dict(facts.get("names", {})))
    return None


def _binary(folder, module_key, arch):
    cubin = folder / f"{module_key}.sm_{arch}.cubin"
    if cubin.is_file():
        return cubin
    ptx = {}
    for path in folder.glob(f"{module_key}.compute_*.ptx"):
        virtual = path.name[len(module_key) + len(".compute_") : -len(".ptx")]
        if virtual.isdigit() and int(virtual) <= arch:
            ptx[int(virtual)] = path
    return ptx[max(ptx)] if ptx else None


def record(
    module_key: str, code: str, options: Any, name_expressions: Any, cooperative: bool
) -> Path | None:
    """With ``GBLA_KERNEL_SPECS`` set, the module's spec written there as ``KEY.json`` (once:
    an existing one is kept); its path, or None when nothing is recorded."""
    folder = os.environ.get(SPECS_ENV)
    if not folder:
        return None
    out = Path(folder) / f"{module_key}.json"
    if out.is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    spec = {
        "format": FORMAT,
        "key": module_key,
        "code": code,
        "options": list(options),
        "name_expressions": list(name_expressions or ()),
        "cooperative": bool(cooperative),
    }
    part = out.with_suffix(f".{os.getpid()}.part")  # whole or not at all, for parallel writers
    part.write_text(json.dumps(spec))
    part.replace(out)
    return out


def include_dirs() -> list[Path]:
    """CUDA's headers (cooperative_groups.h; CCCL's under include/cccl), as CuPy hands them
    to NVRTC: ``CUDA_PATH``'s, nvcc's toolkit's, else /usr/local/cuda's."""
    roots = [Path(os.environ["CUDA_PATH"])] if os.environ.get("CUDA_PATH") else []
    nvcc = shutil.which("nvcc")
    if nvcc:
        roots.append(Path(nvcc).resolve().parents[1])
    roots.append(Path("/usr/local/cuda"))
    for root in roots:
        inc = root / "include"
        if (inc / "cooperative_groups.h").is_file():
            return [d for d in (inc, inc / "cccl") if d.is_dir()]
    return []


def _nvrtc():
    from cuda.bindings import nvrtc  # cuda-bindings: where NVRTC is, on the GPU or off it

    return nvrtc


def _compile(spec, arch, nvrtc, includes, ptx=False):
    """(cubin bytes, {name expression: lowered name}) of one spec for sm_``arch``; with
    ``ptx``, PTX for the virtual architecture compute_``arch`` instead of the cubin."""
    ok = nvrtc.nvrtcResult.NVRTC_SUCCESS
    err, prog = nvrtc.nvrtcCreateProgram(spec["code"].encode(), b"gbla.cu", 0, [], [])
    if err != ok:
        raise RuntimeError(f"nvrtcCreateProgram: {err}")
    try:
        for name in spec["name_expressions"]:
            nvrtc.nvrtcAddNameExpression(prog, name.encode())
        opts = [o.encode() for o in spec["options"]]
        opts += [f"--gpu-architecture={'compute' if ptx else 'sm'}_{arch}".encode()]
        opts += [f"-I{d}".encode() for d in includes]
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        if err != ok:
            _, size = nvrtc.nvrtcGetProgramLogSize(prog)
            log = b" " * size
            nvrtc.nvrtcGetProgramLog(prog, log)
            raise RuntimeError(
                f"module {spec['key']} for sm_{arch}: {log.decode(errors='replace')[-2000:]}"
            )
        if ptx:
            _, size = nvrtc.nvrtcGetPTXSize(prog)
            cubin = b" " * size
            nvrtc.nvrtcGetPTX(prog, cubin)
            cubin = cubin.rstrip(b"\0")
        else:
            _, size = nvrtc.nvrtcGetCUBINSize(prog)
            cubin = b" " * size
            nvrtc.nvrtcGetCUBIN(prog, cubin)
        names = {}
        for name in spec["name_expressions"]:
            _, lowered = nvrtc.nvrtcGetLoweredName(prog, name.encode())
            names[name] = lowered.decode() if isinstance(lowered, bytes) else str(lowered)
        return cubin, names
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def build(
    spec_path: Any, out: Any, archs: Any, *, ptx: Any = None, nvrtc: Any = None
) -> list[Path]:
    """Compile the spec at ``spec_path`` (written by :func:`record`) for each architecture of
    ``archs`` ('80', '90', ...) into ``out``: ``KEY.sm_XX.cubin`` each, with ``ptx`` ('100')
    also ``KEY.compute_XX.ptx`` for GPUs newer than every cubin, and ``KEY.json`` (the lowered
    names); the files written. A cooperative module is passed over (none)."""
    spec = json.loads(Path(spec_path).read_text())
    if spec.get("format") != FORMAT:
        raise ValueError(f"{spec_path}: a spec of format {spec.get('format')}, not {FORMAT}")
    if spec["cooperative"]:
        return []
    if key(spec["code"], spec["options"], spec["name_expressions"], False) != spec["key"]:
        raise ValueError(f"{spec_path}: its key does not match its code")
    nvrtc = _nvrtc() if nvrtc is None else nvrtc
    includes = include_dirs()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written, names = [], {}
    targets = [(str(a), False) for a in archs] + ([(str(ptx), True)] if ptx else [])
    for arch, as_ptx in targets:
        binary, names = _compile(spec, arch, nvrtc, includes, ptx=as_ptx)
        name = f"compute_{arch}.ptx" if as_ptx else f"sm_{arch}.cubin"
        path = out / f"{spec['key']}.{name}"
        path.write_bytes(binary)
        written.append(path)
    meta = out / f"{spec['key']}.json"
    facts = {"format": FORMAT, "key": spec["key"], "archs": [a for a, _ in targets]}
    meta.write_text(json.dumps({**facts, "names": names}))
    return [*written, meta]
