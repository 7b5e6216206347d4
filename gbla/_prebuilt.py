"""Kernel modules compiled ahead of time, so that a first call loads machine code instead of
running NVRTC (issue 41: 3-17 s a method on a fresh machine, most of it CuPy's own element-wise
kernels and gbla's generated ones, not only gbla's .cu files).

Every module CuPy compiles for this process passes through one hook (:func:`install`, put on
``cupy.cuda.compiler._compile_module_with_cache`` when gbla first imports CuPy): gbla's .cu
modules, the fused blocks it generates, CuPy's element-wise and reduction kernels. The hook names
the module by a key of everything its compile reads (:func:`key`: the code, the options less
their machine-specific ``-I`` folders, the name expressions, whether it is launched
cooperatively, and a digest of CuPy's headers where the code includes them) and asks
:func:`find` for a prebuilt cubin of that key for the device's architecture. Found: it is
loaded as it is, with the lowered names of its name expressions kept beside it (no NVRTC, no
CuPy cache lookup, whose key itself costs an NVRTC preprocessing run of ~20 ms per set of
options). Anything missing, unreadable or refused by the driver: CuPy compiles it, as before.

Where prebuilt modules come from:

- with ``GBLA_KERNEL_SPECS=DIR`` in the environment the hook writes the spec of each module it
  sees into DIR (:func:`record`: the code, its options and names as JSON), so that running the
  methods once (``gbla warmup``) lists what they load;
- :func:`build` (``python tools/build_kernels.py DIR --out OUT --arch 80 90 100 --ptx 80``)
  compiles each spec with NVRTC for those architectures: ``KEY.sm_XX.cubin``, PTX for newer
  GPUs (``KEY.compute_XX.ptx``, which the driver compiles on load) and ``KEY.json``; a spec
  that includes CuPy's headers builds where that CuPy is installed (the GPU machine);
- the hook looks in the folders of ``GBLA_PREBUILT`` (``os.pathsep``-separated), then in the
  package's own ``kernels/prebuilt``, which ships the built-in methods' modules for the CuPy
  version they were recorded with (another CuPy misses CuPy's own kernels, and compiles them).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import threading
import warnings
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

__all__ = [
    "FORMAT",
    "Prebuilt",
    "key",
    "folders",
    "find",
    "record",
    "build",
    "include_dirs",
    "install",
    "counts",
    "unpacked",
    "cache_root",
    "pack",
    "describe",
]

FORMAT = 2  # bumped when what a key covers or the files' layout changes
PACKAGE_DIR = Path(__file__).parent / "kernels" / "prebuilt"
SPECS_ENV, PREBUILT_ENV = "GBLA_KERNEL_SPECS", "GBLA_PREBUILT"
# what CuPy adds to every NVRTC compile after the hook's point (cupy/cuda/compiler.py), so
# that a prebuilt module is the one CuPy would have built
CUPY_ADDS = ("-ftz=true", "--device-as-default-execution-space")


class Prebuilt(NamedTuple):
    """A module found prebuilt: its cubin's path, and each name expression's lowered name."""

    path: Path
    names: dict


def key(
    code: str, options: Any, name_expressions: Any, cooperative: bool, headers: str = ""
) -> str:
    """The module's name among prebuilt ones: a SHA-256 over everything its compile reads.
    ``-I`` options are left out (where headers sit differs between machines; what they hold
    is ``headers``, a digest of CuPy's headers for code that includes them)."""
    h = hashlib.sha256()
    parts = (
        f"gbla-kernel/{FORMAT}",
        code,
        "\0".join(o for o in options if not o.startswith("-I")),
        "\0".join(name_expressions or ()),
        "cooperative" if cooperative else "plain",
        headers,
    )
    for part in parts:
        h.update(part.encode())
        h.update(b"\0\1")  # no two splits of the same text give one key
    return h.hexdigest()[:40]


def folders(arch: str | None = None) -> list[Path]:
    """Where prebuilt modules are looked for, in order: ``GBLA_PREBUILT``'s folders, then the
    package's own archive for ``arch`` (unpacked once into the user's cache: :func:`unpacked`);
    only those that exist."""
    named = [Path(p) for p in os.environ.get(PREBUILT_ENV, "").split(os.pathsep) if p]
    package = unpacked(arch) if arch is not None else None
    return [f for f in [*named, *([package] if package else [])] if f.is_dir()]


def find(module_key: str, arch: str) -> Prebuilt | None:
    """The prebuilt module of ``module_key`` for compute capability ``arch`` ('90'), or None:
    its cubin for that architecture (or an older one of the same major version, which runs on
    it), else PTX of the newest virtual architecture not past it (the driver compiles that on
    load, far faster than NVRTC). A folder whose index of names is missing or unreadable is
    passed over."""
    for folder in folders(arch):
        found = _in_folder(folder, module_key, int(arch))
        if found is not None:
            return found
    return None


_listings: dict = {}  # folder -> the names of its files, as last listed


def _in_folder(folder, module_key, arch):
    """The module in ``folder``, looked up in the listing of its files made at the first look
    (a look costs a few file-system calls a target otherwise, and a process makes about 50),
    listed again where the module is not in it (written since, as by a build)."""
    names = _listings.get(folder)
    found = None if names is None else _named(names, module_key, arch)
    if found is None:
        try:
            names = _listings[folder] = frozenset(os.listdir(folder))
        except OSError:
            return None
        found = _named(names, module_key, arch)
    if found is None:
        return None
    try:
        facts = json.loads((folder / f"{module_key}.json").read_text())
    except (OSError, ValueError):
        return None
    if facts.get("format") == FORMAT and facts.get("key") == module_key:
        return Prebuilt(folder / found, dict(facts.get("names", {})))
    return None


def _named(names, module_key, arch):
    """The name of the module's best file for ``arch`` among ``names`` (a listing of
    ``folder``) where its index of names is there too, else None."""
    if f"{module_key}.json" not in names:
        return None
    cubins, ptx = _targets(arch)
    for name in [f"{module_key}.{t}.cubin" for t in cubins] + [
        f"{module_key}.{t}.ptx" for t in ptx
    ]:
        if name in names:
            return name
    return None


def _targets(arch):
    """The targets that run on compute capability ``arch``, best first: cubins of its major
    version not newer than it, then PTX of virtual architectures not past it."""
    major, minor = divmod(arch, 10)
    cubins = [f"sm_{major}{m}" for m in range(minor, -1, -1)]
    return cubins, [f"compute_{v}" for v in range(arch, 49, -1)]


# ---- the package's archives: one per target (KEY.json and KEY.TARGET.cubin|ptx of every
# module), xz-compressed (the modules repeat each other's kernels: 5.2 MB of sm_90 cubins
# pack into 0.27 MB), listed with their digests in INDEX; unpacked on first use

INDEX = "index.json"


def cache_root() -> Path:
    """Where the package's archives are unpacked: ``GBLA_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/gbla`` (by default ``~/.cache/gbla``)."""
    if os.environ.get("GBLA_CACHE_DIR"):
        return Path(os.environ["GBLA_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gbla"


def unpacked(arch: str) -> Path | None:
    """The folder holding the package's archive for compute capability ``arch``, unpacked
    there once (by whichever process comes first; a cache that cannot be written: a folder
    of the system's temporary one), or None when the package has none for it."""
    return _unpacked(str(arch), PACKAGE_DIR, str(cache_root()))


def _index(package):
    """The package folder's index of archives, or None (missing, unreadable, another format)."""
    try:
        index = json.loads((package / INDEX).read_text())
    except (OSError, ValueError):
        return None
    return index if index.get("format") == FORMAT else None


@functools.lru_cache(maxsize=None)
def _unpacked(arch, package, cache):  # once a process, per architecture and folders
    archives = (_index(package) or {}).get("archives", {})
    cubins, ptx = _targets(int(arch))
    for target in [*cubins, *ptx]:
        if target in archives:
            digest = archives[target]["sha256"]
            name = f"{target}-{digest[:16]}"
            return _unpack(package / archives[target]["file"], name, Path(cache))
    return None


def _unpack(archive, name, cache):
    import tarfile
    import tempfile

    uid = os.getuid() if hasattr(os, "getuid") else 0
    for root in (cache, Path(tempfile.gettempdir()) / f"gbla-{uid}"):  # the second: a
        # cache that cannot be written
        folder = root / "prebuilt" / name
        if (folder / ".complete").is_file():
            return folder
        try:
            folder.parent.mkdir(parents=True, exist_ok=True)
            part = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=folder.parent))
            with tarfile.open(archive, "r:xz") as tar:
                if hasattr(tarfile, "data_filter"):
                    tar.extractall(part, filter="data")
                else:  # a Python before the filters: the archive is the package's own
                    tar.extractall(part)  # noqa: S202
            (part / ".complete").write_text("")
            try:
                part.rename(folder)
            except OSError:  # another process unpacked it first
                shutil.rmtree(part, ignore_errors=True)
            if (folder / ".complete").is_file():
                return folder
        except (OSError, EOFError, ValueError, tarfile.TarError):
            continue
    return None


def describe() -> str | None:
    """What this process may load compiled ahead of time, in words (``gbla bench`` keeps it
    with a run): ``GBLA_PREBUILT``'s folders and the package's archives; None when neither."""
    parts = []
    if os.environ.get(PREBUILT_ENV):
        parts.append(f"GBLA_PREBUILT={os.environ[PREBUILT_ENV]}")
    index = _index(PACKAGE_DIR)
    if index is not None:
        targets = ", ".join(sorted(index["archives"], key=lambda t: (t[0] == "c", len(t), t)))
        parts.append(f"the package's for CuPy {index['cupy']} ({targets})")
    return "; ".join(parts) or None


def pack(folder: Any, dest: Any, cupy_version: str) -> dict:
    """The modules built into ``folder`` (:func:`build`) packed as the package ships them:
    ``dest/TARGET.tar.xz`` a target and ``dest/index.json`` (their digests, and the CuPy
    version whose own kernels they hold); archives of earlier packs are removed. Returns the
    index."""
    import io
    import lzma
    import tarfile

    folder, dest = Path(folder), Path(dest)
    binaries: dict = {}
    for path in sorted(folder.iterdir()):
        parts = path.name.split(".")
        if len(parts) == 3 and parts[2] in ("cubin", "ptx"):
            binaries.setdefault(parts[1], []).append((parts[0], path))
    dest.mkdir(parents=True, exist_ok=True)
    for old in dest.glob("*.tar.xz"):
        old.unlink()
    archives = {}
    for target, modules in sorted(binaries.items()):
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as tar:
            for module_key, path in modules:  # the same bytes for the same modules
                for member in (folder / f"{module_key}.json", path):
                    info = tarfile.TarInfo(member.name)
                    data = member.read_bytes()
                    info.size, info.mode = len(data), 0o644
                    tar.addfile(info, io.BytesIO(data))
        packed = lzma.compress(buffer.getvalue(), preset=9 | lzma.PRESET_EXTREME)
        (dest / f"{target}.tar.xz").write_bytes(packed)
        archives[target] = {
            "file": f"{target}.tar.xz",
            "sha256": hashlib.sha256(packed).hexdigest(),
            "modules": len(modules),
        }
    index = {"format": FORMAT, "cupy": cupy_version, "archives": archives}
    (dest / INDEX).write_text(json.dumps(index, indent=1) + "\n")
    return index


def record(
    module_key: str,
    code: str,
    options: Any,
    name_expressions: Any,
    cooperative: bool,
    headers: str = "",
) -> Path | None:
    """With ``GBLA_KERNEL_SPECS`` set, the module's spec written there as ``KEY.json`` (once:
    an existing one is kept); its path, or None when nothing is recorded. ``options`` are
    those NVRTC compiles with, the architecture aside."""
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
        "headers": headers,
    }
    part = out.with_suffix(f".{os.getpid()}.{threading.get_ident()}.part")  # whole or not at all
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
    names); the files written."""
    spec = json.loads(Path(spec_path).read_text())
    if spec.get("format") != FORMAT:
        raise ValueError(f"{spec_path}: a spec of format {spec.get('format')}, not {FORMAT}")
    facts = (spec["code"], spec["options"], spec["name_expressions"], spec["cooperative"])
    if key(*facts, spec.get("headers", "")) != spec["key"]:
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
    facts = {"format": FORMAT, "key": spec["key"], "files": [p.name for p in written]}
    meta.write_text(json.dumps({**facts, "names": names}))
    return [*written, meta]


# ---- the hook on CuPy's compiler

_counts: Counter = Counter()  # modules this process took prebuilt / left to CuPy to compile
_lock = threading.Lock()
_RDC = ("--device-c", "-dc", "-rdc=true", "--relocatable-device-code=true")


def counts() -> dict:
    """How many modules this process loaded prebuilt (``prebuilt``) and how many the hook
    left to CuPy's compiler (``compiled``: its disk cache or NVRTC) since it was installed."""
    return {"prebuilt": _counts["prebuilt"], "compiled": _counts["compiled"]}


def install(cupy: Any) -> bool:
    """Put the hook on ``cupy``'s compiler (once; True when it is there). A CuPy without the
    function it wraps, or on ROCm, is left as it is: everything compiles as before."""
    compiler: Any = getattr(getattr(cupy, "cuda", None), "compiler", None)
    original = getattr(compiler, "_compile_module_with_cache", None)
    if original is None or getattr(original, "_gbla_prebuilt", False):
        return original is not None
    if getattr(cupy.cuda.runtime, "is_hip", False):
        return False
    with _lock:
        original = compiler._compile_module_with_cache
        if getattr(original, "_gbla_prebuilt", False):
            return True
        hooked = _hook(cupy, compiler, original)
        hooked._gbla_prebuilt = True
        compiler._compile_module_with_cache = hooked
    return True


def _hook(cupy, compiler, original):
    digests: dict = {}  # CuPy's header text -> its digest, computed once

    def compile_module(source, options=(), *args, **kwargs):
        names = kwargs.get("name_expressions")
        cooperative = bool(kwargs.get("enable_cooperative_groups"))
        plain = (
            not args
            and kwargs.get("backend", "nvrtc") == "nvrtc"
            and not kwargs.get("jitify")
            and not kwargs.get("to_ltoir")
            and not any(o in _RDC for o in options)
            and not os.environ.get("CUPY_CUDA_COMPILE_WITH_DEBUG")
        )
        if not plain:  # not what a prebuilt module stands for
            _counts["compiled"] += 1
            return original(source, options, *args, **kwargs)
        headers = ""
        if "<cupy/" in source:
            extra = kwargs.get("extra_source") or ""
            headers = digests.get(extra) or digests.setdefault(
                extra, hashlib.sha256(f"{cupy.__version__}\0{extra}".encode()).hexdigest()
            )
        full = (*options, *CUPY_ADDS)
        module_key = key(source, full, names, cooperative, headers)
        try:
            record(module_key, source, full, names, cooperative, headers)
        except OSError as e:  # recording is a tool's: the search goes on without it
            warnings.warn(f"{SPECS_ENV}: the module's spec was not written: {e}", stacklevel=2)
        module = _load(compiler, module_key, kwargs.get("arch"), names)
        _counts["prebuilt" if module is not None else "compiled"] += 1
        return module if module is not None else original(source, options, *args, **kwargs)

    return compile_module


def _load(compiler, module_key, arch, names):
    """The prebuilt module of ``module_key`` loaded for ``arch`` (the device's by default), or
    None: none there, a name expression it lacks, or a file the driver refuses."""
    try:
        found = find(module_key, str(arch or compiler._get_arch()))
        if found is None or any(n not in found.names for n in names or ()):
            return None
        binary = found.path.read_bytes()
        if found.path.suffix == ".ptx":
            binary += b"\0"  # the driver reads PTX as a C string
        module = compiler.function.Module()
        module.load(binary)
        if names:
            module._set_mapping({n: found.names[n] for n in names})
        return module
    except Exception:  # unreadable, or refused by the driver: CuPy compiles it instead
        return None
