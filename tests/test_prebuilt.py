"""Kernel modules compiled ahead of time (gbla/_prebuilt.py, issue 41): the key that names a
module, recording its spec, finding a prebuilt cubin, the hook on CuPy's compiler that loads one
instead of compiling (with a stand-in for CuPy's compiler, so that it runs without a GPU), a
real module built by NVRTC for sm_90 (skipped without cuda-bindings' NVRTC), the package's own
folder, and on a GPU the built-in methods loading every module prebuilt."""

import json
import os
import subprocess
import sys
import types

import pytest

import gbla
from gbla import _prebuilt
from gbla.kernels import _launch

from .conftest import SKIP_NO_GPU
from .test_nvrtc_compile import NVRTC


def test_the_key_covers_everything_the_compile_reads():
    base = ("code", ("-std=c++17",), ("k<int>",), False, "")
    k = _prebuilt.key(*base)
    assert k == _prebuilt.key(*base) and len(k) == 40
    changed = [
        ("code ", ("-std=c++17",), ("k<int>",), False, ""),
        ("code", ("-std=c++20",), ("k<int>",), False, ""),
        ("code", ("-std=c++17",), ("k<long>",), False, ""),
        ("code", ("-std=c++17",), None, False, ""),
        ("code", ("-std=c++17",), ("k<int>",), True, ""),
        ("code", ("-std=c++17",), ("k<int>",), False, "headers"),
        # the same text split otherwise between the parts
        ("code-std=c++17", (), ("k<int>",), False, ""),
    ]
    assert len({k} | {_prebuilt.key(*c) for c in changed}) == len(changed) + 1
    # where headers sit on this machine is not part of it
    assert _prebuilt.key("code", ("-I/site/cupy/include", "-std=c++17"), ("k<int>",), False) == k


def test_a_spec_is_recorded_only_where_asked_and_once(tmp_path, monkeypatch):
    monkeypatch.delenv(_prebuilt.SPECS_ENV, raising=False)
    assert _prebuilt.record("k1", "code", ("-O3",), ("f<int>",), False) is None
    monkeypatch.setenv(_prebuilt.SPECS_ENV, str(tmp_path / "specs"))
    path = _prebuilt.record("k1", "code", ("-O3",), ("f<int>",), True, "digest")
    spec = json.loads(path.read_text())
    assert spec == {
        "format": _prebuilt.FORMAT,
        "key": "k1",
        "code": "code",
        "options": ["-O3"],
        "name_expressions": ["f<int>"],
        "cooperative": True,
        "headers": "digest",
    }
    assert _prebuilt.record("k1", "other", (), None, False) == path  # kept as it was
    assert json.loads(path.read_text())["code"] == "code"
    assert [p.name for p in path.parent.iterdir()] == ["k1.json"]  # no part file left


def _prebuilt_files(folder, key, targets=("sm_90.cubin",), names=None, **facts):
    """A module as build() leaves it in ``folder``: ``KEY.json`` (``facts`` over its
    fields) and a file a target, holding 'KEY TARGET'."""
    folder.mkdir(parents=True, exist_ok=True)
    for target in targets:
        (folder / f"{key}.{target}").write_bytes(f"{key} {target}".encode())
    meta = {"format": _prebuilt.FORMAT, "key": key, "names": names or {}, **facts}
    (folder / f"{key}.json").write_text(json.dumps(meta))


def test_find_takes_the_named_folders_in_order_and_passes_over_bad_files(tmp_path, monkeypatch):
    monkeypatch.setattr(_prebuilt, "PACKAGE_DIR", tmp_path / "package")  # none
    monkeypatch.setenv(_prebuilt.PREBUILT_ENV, f"{tmp_path / 'missing'}:{tmp_path / 'mine'}")
    assert _prebuilt.find("k", "90") is None  # no folder at all
    _prebuilt_files(tmp_path / "mine", "k", names={"f<int>": "_Z1fIiEvv"})
    found = _prebuilt.find("k", "90")
    assert found.path == tmp_path / "mine" / "k.sm_90.cubin"
    assert found.names == {"f<int>": "_Z1fIiEvv"}
    assert _prebuilt.find("k", "80") is None  # no cubin for that architecture
    _prebuilt_files(tmp_path / "first", "k")
    monkeypatch.setenv(_prebuilt.PREBUILT_ENV, f"{tmp_path / 'first'}:{tmp_path / 'mine'}")
    assert _prebuilt.find("k", "90").path.parent == tmp_path / "first"
    # an index of another format or key, or one that is not JSON, is passed over
    _prebuilt_files(tmp_path / "first", "k", format=_prebuilt.FORMAT + 1)
    assert _prebuilt.find("k", "90").path.parent == tmp_path / "mine"
    (tmp_path / "mine" / "k.json").write_text("{not json")
    assert _prebuilt.find("k", "90") is None


def test_a_folder_is_listed_once_and_again_for_a_module_written_since(tmp_path, monkeypatch):
    # a process finds about 50 modules: their folder's files are listed at the first look,
    # not statted a target each time; a module not in the listing (a build's, written
    # since) lists it again
    monkeypatch.setattr(_prebuilt, "PACKAGE_DIR", tmp_path / "package")
    monkeypatch.setenv(_prebuilt.PREBUILT_ENV, str(tmp_path / "mine"))
    listed = []
    real = os.listdir
    monkeypatch.setattr(
        _prebuilt.os, "listdir", lambda folder: listed.append(folder) or real(folder)
    )
    for key in ("a", "b"):
        _prebuilt_files(tmp_path / "mine", key)
    assert _prebuilt.find("a", "90").path.name == "a.sm_90.cubin"
    assert _prebuilt.find("b", "90").path.name == "b.sm_90.cubin"
    assert _prebuilt.find("a", "90") is not None and len(listed) == 1
    _prebuilt_files(tmp_path / "mine", "c")
    assert _prebuilt.find("c", "90").path.name == "c.sm_90.cubin" and len(listed) == 2


def test_a_gpu_takes_a_cubin_of_its_major_version_else_the_newest_ptx_not_past_it(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(_prebuilt, "PACKAGE_DIR", tmp_path / "package")
    monkeypatch.setenv(_prebuilt.PREBUILT_ENV, str(tmp_path))
    _prebuilt_files(tmp_path, "k", targets=("sm_80.cubin",))
    for virtual in ("80", "90", "120"):
        (tmp_path / f"k.compute_{virtual}.ptx").write_text("//ptx")
    assert _prebuilt.find("k", "80").path.name == "k.sm_80.cubin"  # a cubin first
    assert _prebuilt.find("k", "89").path.name == "k.sm_80.cubin"  # sm_80's runs on 8.9
    assert _prebuilt.find("k", "100").path.name == "k.compute_90.ptx"
    assert _prebuilt.find("k", "120").path.name == "k.compute_120.ptx"
    assert _prebuilt.find("k", "75") is None  # nothing it can run


class _FakeCompiler:
    """What the hook asks of cupy.cuda.compiler: the function it wraps (which records its
    calls), the device's architecture and CuPy's Module (``refuse``: the driver refuses what
    is loaded)."""

    def __init__(self, refuse=False):
        self.compiled, self.loaded = [], []
        fake = self

        def compile_module(source, options=(), **kwargs):
            fake.compiled.append((source, options, kwargs))
            return ("compiled", source)

        class Module:
            def load(self, binary):
                if refuse:
                    raise RuntimeError("CUDA_ERROR_INVALID_IMAGE")
                fake.loaded.append(binary)
                self.binary, self.mapping = binary, None

            def _set_mapping(self, mapping):
                self.mapping = mapping

        self._compile_module_with_cache = compile_module
        self._get_arch = lambda: "90"
        self.function = types.SimpleNamespace(Module=Module)


def _fake_cupy(refuse=False, hip=False):
    compiler = _FakeCompiler(refuse)
    runtime = types.SimpleNamespace(is_hip=hip)
    return types.SimpleNamespace(
        __version__="14.2.0", cuda=types.SimpleNamespace(compiler=compiler, runtime=runtime)
    )


@pytest.fixture
def hooked(monkeypatch, tmp_path):
    """A stand-in CuPy with the hook on it: (cupy, the compiler's calls before the hook);
    only ``tmp_path / 'mine'`` holds prebuilt modules."""
    monkeypatch.setattr(_prebuilt, "PACKAGE_DIR", tmp_path / "package")
    monkeypatch.setenv(_prebuilt.PREBUILT_ENV, str(tmp_path / "mine"))
    monkeypatch.delenv(_prebuilt.SPECS_ENV, raising=False)
    monkeypatch.setattr(_prebuilt, "_counts", _prebuilt.Counter())

    def make(**kwargs):
        cupy = _fake_cupy(**kwargs)
        assert _prebuilt.install(cupy)
        return cupy, cupy.cuda.compiler

    return make


EXPRESSION = "gbla_store<double, int>"
OPTIONS = ("-std=c++17", "-I/site/cupy/_core/include")


def _key(source=None, names=(EXPRESSION,), cooperative=False, headers=""):
    source = _launch.source("entries.cu") if source is None else source
    return _prebuilt.key(source, (*OPTIONS, *_prebuilt.CUPY_ADDS), names, cooperative, headers)


def _compile(compiler, source=None, names=(EXPRESSION,), **kwargs):
    source = _launch.source("entries.cu") if source is None else source
    return compiler._compile_module_with_cache(
        source, OPTIONS, name_expressions=names, extra_source="// cupy headers", **kwargs
    )


def test_the_hook_goes_on_once_and_only_where_it_can(hooked):
    cupy, compiler = hooked()
    wrapped = compiler._compile_module_with_cache
    assert _prebuilt.install(cupy) and compiler._compile_module_with_cache is wrapped
    bare = types.SimpleNamespace(cuda=types.SimpleNamespace())
    assert not _prebuilt.install(bare)  # a CuPy without the function: left as it is
    hip = _fake_cupy(hip=True)
    original = hip.cuda.compiler._compile_module_with_cache
    assert not _prebuilt.install(hip) and hip.cuda.compiler._compile_module_with_cache is original


def test_without_a_prebuilt_module_cupy_compiles_and_the_spec_is_recorded(
    hooked, tmp_path, monkeypatch
):
    monkeypatch.setenv(_prebuilt.SPECS_ENV, str(tmp_path / "specs"))
    cupy, compiler = hooked()
    assert _compile(compiler, arch="90") == ("compiled", _launch.source("entries.cu"))
    ((source, options, kwargs),) = compiler.compiled
    assert options == OPTIONS and kwargs["name_expressions"] == (EXPRESSION,)
    spec = json.loads((tmp_path / "specs" / f"{_key()}.json").read_text())
    assert spec["options"] == [*OPTIONS, *_prebuilt.CUPY_ADDS] and spec["headers"] == ""
    assert spec["name_expressions"] == [EXPRESSION] and spec["code"] == source
    assert _prebuilt.counts() == {"prebuilt": 0, "compiled": 1}
    # code that includes CuPy's headers is keyed on them (and CuPy's version) too
    _compile(compiler, source="#include <cupy/carray.cuh>\n", names=None)
    (recorded,) = [p for p in (tmp_path / "specs").glob("*.json") if p.stem != _key()]
    assert len(json.loads(recorded.read_text())["headers"]) == 64


def test_a_spec_that_cannot_be_written_warns_and_the_compile_goes_on(hooked, tmp_path, monkeypatch):
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv(_prebuilt.SPECS_ENV, str(tmp_path / "a-file" / "specs"))
    cupy, compiler = hooked()
    with pytest.warns(UserWarning, match="GBLA_KERNEL_SPECS: the module's spec was not written"):
        assert _compile(compiler)[0] == "compiled"


def _prebuilt_store(folder, names=None, target="sm_90.cubin"):
    names = names or {EXPRESSION: "_Z10gbla_store"}
    _prebuilt_files(folder, _key(), targets=(target,), names=names)


def test_a_prebuilt_module_is_loaded_with_its_lowered_names(hooked, tmp_path):
    _prebuilt_store(tmp_path / "mine")
    cupy, compiler = hooked()
    module = _compile(compiler)
    assert compiler.compiled == [] and compiler.loaded == [f"{_key()} sm_90.cubin".encode()]
    assert module.mapping == {EXPRESSION: "_Z10gbla_store"}
    assert _prebuilt.counts() == {"prebuilt": 1, "compiled": 0}


def test_prebuilt_ptx_is_handed_to_the_driver_as_a_c_string(hooked, tmp_path):
    _prebuilt_store(tmp_path / "mine", target="compute_80.ptx")
    cupy, compiler = hooked()
    _compile(compiler)
    assert compiler.loaded == [f"{_key()} compute_80.ptx".encode() + b"\0"]


@pytest.mark.parametrize(
    "case",
    ["refused", "lacks a name", "another cooperative", "jitify", "rdc", "nvcc", "debug"],
)
def test_what_a_prebuilt_module_cannot_stand_for_is_compiled(hooked, tmp_path, monkeypatch, case):
    names = {"other<int>": "_Z5otherIiEvv"} if case == "lacks a name" else None
    _prebuilt_store(tmp_path / "mine", names=names)
    cupy, compiler = hooked(refuse=case == "refused")
    kwargs = {
        "another cooperative": {"enable_cooperative_groups": True},
        "jitify": {"jitify": True},
        "nvcc": {"backend": "nvcc"},
    }.get(case, {})
    if case == "debug":
        monkeypatch.setenv("CUPY_CUDA_COMPILE_WITH_DEBUG", "1")
    if case == "rdc":
        compiler._compile_module_with_cache(
            _launch.source("entries.cu"), (*OPTIONS, "-rdc=true"), name_expressions=(EXPRESSION,)
        )
    else:
        _compile(compiler, **kwargs)
    assert len(compiler.compiled) == 1 and compiler.loaded == []
    assert _prebuilt.counts() == {"prebuilt": 0, "compiled": 1}


def test_gbla_s_loader_hands_its_modules_to_cupy(monkeypatch):
    made = []

    class RawModule:
        def __init__(self, **kwargs):
            made.append(kwargs)

        def get_function(self, name):
            return types.SimpleNamespace(kernel=name)

    fake = types.SimpleNamespace(RawModule=RawModule)
    monkeypatch.setattr(_launch, "_cupy", lambda: fake)
    monkeypatch.setattr(_launch, "device_id", lambda: 0)
    for cache in (_launch._module, _launch._function):
        cache.cache_clear()
    try:
        kernel = _launch.function("loop.cu", "gbla_loop_test", cooperative=True)
        assert made == [
            {
                "code": _launch.source("loop.cu"),
                "options": _launch.OPTIONS,
                "name_expressions": None,
                "enable_cooperative_groups": True,
            }
        ]
        assert kernel.function.kernel == "gbla_loop_test"
    finally:
        for cache in (_launch._module, _launch._function):
            cache.cache_clear()


def _built(folder, keys=("k1", "k2"), targets=("sm_90.cubin", "compute_80.ptx")):
    for key in keys:
        _prebuilt_files(folder, key, targets, names={"f<int>": f"_Z1fIiEvv_{key}"})
    return folder


@pytest.fixture
def package(tmp_path, monkeypatch):
    """An empty package folder and user cache, and no GBLA_PREBUILT."""
    monkeypatch.setattr(_prebuilt, "PACKAGE_DIR", tmp_path / "package")
    monkeypatch.setenv("GBLA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(_prebuilt.PREBUILT_ENV, raising=False)
    _prebuilt._unpacked.cache_clear()
    yield tmp_path / "package"
    _prebuilt._unpacked.cache_clear()


def test_packed_modules_are_unpacked_once_for_the_gpu_that_runs_them(package, tmp_path):
    (package / "stale.tar.xz").parent.mkdir(parents=True)
    (package / "stale.tar.xz").write_bytes(b"old")
    index = _prebuilt.pack(_built(tmp_path / "built"), package, "14.2.0")
    assert sorted(p.name for p in package.iterdir()) == [
        "compute_80.tar.xz",
        "index.json",
        "sm_90.tar.xz",
    ]
    assert index["cupy"] == "14.2.0" and index["archives"]["sm_90"]["modules"] == 2
    # the same modules pack to the same bytes (a rebuild that changes nothing changes no file)
    again = _prebuilt.pack(tmp_path / "built", tmp_path / "again", "14.2.0")
    assert again["archives"] == index["archives"]
    found = _prebuilt.find("k2", "90")
    assert found.path.read_bytes() == b"k2 sm_90.cubin"
    assert found.names == {"f<int>": "_Z1fIiEvv_k2"}
    assert found.path.parent.parent == tmp_path / "cache" / "prebuilt"
    # an sm_8x GPU takes the PTX, a GPU older than every target nothing
    assert _prebuilt.find("k1", "86").path.read_bytes() == b"k1 compute_80.ptx"
    assert _prebuilt.find("k1", "75") is None
    # unpacked once: a new process finds the folder as it was left
    _prebuilt._unpacked.cache_clear()
    (found.path.parent / "k2.sm_90.cubin").write_bytes(b"kept")
    assert _prebuilt.find("k2", "90").path.read_bytes() == b"kept"
    # GBLA_PREBUILT's folders come first
    _built(tmp_path / "mine", keys=("k2",), targets=("sm_90.cubin",))
    os.environ[_prebuilt.PREBUILT_ENV] = str(tmp_path / "mine")
    try:
        assert _prebuilt.find("k2", "90").path.parent == tmp_path / "mine"
    finally:
        del os.environ[_prebuilt.PREBUILT_ENV]


def test_a_cache_that_cannot_be_written_unpacks_into_a_temporary_folder(
    package, tmp_path, monkeypatch
):
    _prebuilt.pack(_built(tmp_path / "built"), package, "14.2.0")
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("GBLA_CACHE_DIR", str(tmp_path / "a-file"))  # not a folder
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    found = _prebuilt.find("k1", "90")
    assert found is not None and found.path.is_relative_to(tmp_path / "tmp")


def test_a_package_without_an_index_or_of_another_format_offers_nothing(package, tmp_path):
    assert _prebuilt.unpacked("90") is None  # no folder at all
    _prebuilt.pack(_built(tmp_path / "built"), package, "14.2.0")
    index = json.loads((package / "index.json").read_text())
    (package / "index.json").write_text(json.dumps({**index, "format": _prebuilt.FORMAT + 1}))
    _prebuilt._unpacked.cache_clear()
    assert _prebuilt.unpacked("90") is None
    (package / "index.json").write_text("{not json")
    _prebuilt._unpacked.cache_clear()
    assert _prebuilt.unpacked("90") is None


def test_the_package_s_prebuilt_modules_are_whole():
    # the archives the package ships are those its index lists, with their digests, and each
    # holds a binary and the lowered names of every module it counts
    import hashlib
    import tarfile

    folder = _prebuilt.PACKAGE_DIR
    index = json.loads((folder / "index.json").read_text())
    assert index["format"] == _prebuilt.FORMAT
    archives = index["archives"]
    assert {"sm_80", "sm_90", "sm_100"} <= set(archives)
    assert {p.name for p in folder.iterdir()} == {"index.json", "README.md"} | {
        a["file"] for a in archives.values()
    }
    for target, facts in archives.items():
        path = folder / facts["file"]
        assert hashlib.sha256(path.read_bytes()).hexdigest() == facts["sha256"], target
        with tarfile.open(path, "r:xz") as tar:
            names = set(tar.getnames())
            metas = sorted(n for n in names if n.endswith(".json"))
            assert len(metas) == facts["modules"] == len(names) // 2, target
            suffix = "ptx" if target.startswith("compute_") else "cubin"
            for meta in metas:
                key = meta[: -len(".json")]
                assert f"{key}.{target}.{suffix}" in names, (target, key)
                facts_of = json.loads(tar.extractfile(meta).read())
                assert facts_of["key"] == key and facts_of["format"] == _prebuilt.FORMAT


@pytest.mark.nvcc
@pytest.mark.skipif(NVRTC is None, reason="no NVRTC library")
def test_a_recorded_module_builds_to_a_cubin_that_the_hook_then_loads(
    hooked, tmp_path, monkeypatch
):
    monkeypatch.setenv(_prebuilt.SPECS_ENV, str(tmp_path / "specs"))
    cupy, compiler = hooked()
    _compile(compiler)
    (spec,) = (tmp_path / "specs").glob("*.json")
    written = _prebuilt.build(spec, tmp_path / "out", ["90"], ptx="80")
    cubin, ptx, meta = written
    assert ptx.name.endswith(".compute_80.ptx") and b".target sm_80" in ptx.read_bytes()
    assert cubin.name.endswith(".sm_90.cubin") and cubin.read_bytes()[:4] == b"\x7fELF"
    names = json.loads(meta.read_text())["names"]
    assert list(names) == [EXPRESSION] and names[EXPRESSION].startswith("_Z")
    monkeypatch.setenv(_prebuilt.PREBUILT_ENV, str(tmp_path / "out"))
    module = _compile(compiler)
    assert compiler.loaded == [cubin.read_bytes()] and module.mapping == names
    # the tool does the same for a folder of specs, emptying its folder first with --clean
    import importlib.util
    from pathlib import Path

    tool = Path(__file__).parents[1] / "tools" / "build_kernels.py"
    module_spec = importlib.util.spec_from_file_location("build_kernels", tool)
    build_kernels = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(build_kernels)
    (tmp_path / "tool").mkdir()
    (tmp_path / "tool" / "stale.sm_90.cubin").write_bytes(b"old")
    args = [str(tmp_path / "specs"), "--out", str(tmp_path / "tool"), "--arch", "90", "--clean"]
    assert build_kernels.main(args) == 0
    assert {p.name for p in (tmp_path / "tool").iterdir()} == {cubin.name, meta.name}
    assert (tmp_path / "tool" / cubin.name).read_bytes() == cubin.read_bytes()
    # a spec whose code no longer matches its key is refused
    bad = json.loads(spec.read_text())
    bad["code"] += "\n"
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="does not match its code"):
        _prebuilt.build(tmp_path / "bad.json", tmp_path / "out", ["90"])


_SEARCHES = """
import json, sys
import numpy as np
import gbla
from gbla import _prebuilt, generators as g
A = g.rmat(9, 8, seed=3, device="gpu")
W = g.with_weights(g.grid2d(15, 11, device="gpu"), 1, 9).astype(np.float32)
out = [gbla.bfs(A, 1, method=m).tolist() for m in ("algebraic", "persistent")]
out += [gbla.sssp(W, 4, method=m).tolist() for m in ("bellman_ford", "delta_stepping")]
print(json.dumps({"results": out, "modules": _prebuilt.counts()}))
"""


def _searches(env):
    done = subprocess.run(
        [sys.executable, "-c", _SEARCHES], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@SKIP_NO_GPU
@pytest.mark.gpu
@pytest.mark.skipif(NVRTC is None, reason="no NVRTC library")
def test_on_a_gpu_searches_take_every_module_prebuilt_once_built(tmp_path):
    import cupy

    from .test_cli import load_module

    # what the searches load, recorded (from CuPy's cache as it is) ...
    env = {k: v for k, v in os.environ.items() if k != _prebuilt.PREBUILT_ENV}
    first = _searches({**env, _prebuilt.SPECS_ENV: str(tmp_path / "specs")})
    arch = cupy.cuda.Device().compute_capability
    build = load_module("tools/build_kernels.py").main
    assert build([str(tmp_path / "specs"), "--out", str(tmp_path / "pre"), "--arch", arch]) == 0
    # ... then, in a process with an empty kernel cache, every one loaded prebuilt, and the
    # same answers
    empty = {**env, "CUPY_CACHE_DIR": str(tmp_path / "cache")}
    second = _searches({**empty, _prebuilt.PREBUILT_ENV: str(tmp_path / "pre")})
    assert second["results"] == first["results"]
    assert second["modules"] == {"prebuilt": sum(first["modules"].values()), "compiled": 0}
    assert not (tmp_path / "cache").exists() or not os.listdir(tmp_path / "cache")


@SKIP_NO_GPU
@pytest.mark.gpu
def test_the_package_s_prebuilt_modules_cover_the_built_in_methods(tmp_path, monkeypatch):
    # the package ships what every built-in method loads on this GPU (tools/device_run.sh
    # 'first_call prebuilt' rebuilds them after a kernel changes): a warm-up into an empty
    # cache compiles nothing
    import cupy

    arch = cupy.cuda.Device().compute_capability
    assert _prebuilt.unpacked(arch) is not None, f"the package ships nothing for sm_{arch}"
    monkeypatch.setenv("CUPY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(_prebuilt.PREBUILT_ENV, raising=False)
    report = gbla.warmup(workers=8)
    assert report["failed"] == []
    assert report["modules"]["compiled"] == 0, report["modules"]
