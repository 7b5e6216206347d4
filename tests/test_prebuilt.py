"""Kernel modules compiled ahead of time (gbla/kernels/_prebuilt.py, issue 41): the key that
names a module, recording its spec, finding a prebuilt cubin, the loader's choice between a
prebuilt module and NVRTC (with a stand-in for CuPy, so that it runs without a GPU), and a
real module built by NVRTC for sm_90 (skipped without cuda-bindings' NVRTC)."""

import json
import types

import pytest

from gbla.kernels import _launch, _prebuilt

from .test_nvrtc_compile import NVRTC


def test_the_key_covers_everything_the_compile_reads():
    base = ("code", ("-std=c++17",), ("k<int>",), False)
    k = _prebuilt.key(*base)
    assert k == _prebuilt.key(*base) and len(k) == 40
    changed = [
        ("code ", ("-std=c++17",), ("k<int>",), False),
        ("code", ("-std=c++20",), ("k<int>",), False),
        ("code", ("-std=c++17",), ("k<long>",), False),
        ("code", ("-std=c++17",), None, False),
        ("code", ("-std=c++17",), ("k<int>",), True),
        # the same text split otherwise between the parts
        ("code-std=c++17", (), ("k<int>",), False),
    ]
    assert len({k} | {_prebuilt.key(*c) for c in changed}) == len(changed) + 1


def test_a_spec_is_recorded_only_where_asked_and_once(tmp_path, monkeypatch):
    monkeypatch.delenv(_prebuilt.SPECS_ENV, raising=False)
    assert _prebuilt.record("k1", "code", ("-O3",), ("f<int>",), False) is None
    monkeypatch.setenv(_prebuilt.SPECS_ENV, str(tmp_path / "specs"))
    path = _prebuilt.record("k1", "code", ("-O3",), ("f<int>",), True)
    spec = json.loads(path.read_text())
    assert spec == {
        "format": _prebuilt.FORMAT,
        "key": "k1",
        "code": "code",
        "options": ["-O3"],
        "name_expressions": ["f<int>"],
        "cooperative": True,
    }
    assert _prebuilt.record("k1", "other", (), None, False) == path  # kept as it was
    assert json.loads(path.read_text())["code"] == "code"
    assert [p.name for p in path.parent.iterdir()] == ["k1.json"]  # no part file left


def _prebuilt_files(folder, key, arch="90", names=None, **facts):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{key}.sm_{arch}.cubin").write_bytes(b"\x7fELF")
    meta = {"format": _prebuilt.FORMAT, "key": key, "names": names or {}, **facts}
    (folder / f"{key}.json").write_text(json.dumps(meta))


def test_find_takes_the_named_folders_first_and_passes_over_bad_files(tmp_path, monkeypatch):
    monkeypatch.setattr(_prebuilt, "PACKAGE_DIR", tmp_path / "package")
    monkeypatch.delenv(_prebuilt.PREBUILT_ENV, raising=False)
    assert _prebuilt.find("k", "90") is None  # no folder at all
    _prebuilt_files(tmp_path / "package", "k", names={"f<int>": "_Z1fIiEvv"})
    found = _prebuilt.find("k", "90")
    assert found.path == tmp_path / "package" / "k.sm_90.cubin"
    assert found.names == {"f<int>": "_Z1fIiEvv"}
    assert _prebuilt.find("k", "80") is None  # no cubin for that architecture
    _prebuilt_files(tmp_path / "mine", "k")
    monkeypatch.setenv(_prebuilt.PREBUILT_ENV, f"{tmp_path / 'missing'}:{tmp_path / 'mine'}")
    assert _prebuilt.find("k", "90").path.parent == tmp_path / "mine"
    # an index of another format or key, or one that is not JSON, is passed over
    _prebuilt_files(tmp_path / "mine", "k", format=_prebuilt.FORMAT + 1)
    assert _prebuilt.find("k", "90").path.parent == tmp_path / "package"
    (tmp_path / "package" / "k.json").write_text("{not json")
    assert _prebuilt.find("k", "90") is None


def test_without_a_cubin_for_the_gpu_the_newest_ptx_not_past_it_is_taken(tmp_path, monkeypatch):
    monkeypatch.setattr(_prebuilt, "PACKAGE_DIR", tmp_path)
    monkeypatch.delenv(_prebuilt.PREBUILT_ENV, raising=False)
    _prebuilt_files(tmp_path, "k", arch="80")
    for virtual in ("80", "90", "120"):
        (tmp_path / f"k.compute_{virtual}.ptx").write_text("//ptx")
    assert _prebuilt.find("k", "80").path.name == "k.sm_80.cubin"  # a cubin first
    assert _prebuilt.find("k", "100").path.name == "k.compute_90.ptx"
    assert _prebuilt.find("k", "120").path.name == "k.compute_120.ptx"
    assert _prebuilt.find("k", "75") is None  # nothing it can run


class _FakeCupy:
    """What the loader asks of CuPy: RawModule from code or a path, a device's id and
    compute capability; ``refuse``: a path-loaded module whose kernels cannot be found."""

    def __init__(self, refuse=False):
        self.made, self.looked_up, self.refuse = [], [], refuse
        fake = self

        class Device:
            def __init__(self, device=0):
                self.id = device
                self.compute_capability = "90"

        class RawModule:
            def __init__(self, **kwargs):
                self.kwargs = kwargs
                fake.made.append(kwargs)

            def get_function(self, name):
                fake.looked_up.append(name)
                if fake.refuse and "path" in self.kwargs:
                    raise RuntimeError("CUDA_ERROR_NO_BINARY_FOR_GPU")
                return types.SimpleNamespace(kernel=name)

        self.cuda = types.SimpleNamespace(Device=Device)
        self.RawModule = RawModule


@pytest.fixture
def fake_cupy(monkeypatch, tmp_path):
    def install(refuse=False):
        fake = _FakeCupy(refuse)
        monkeypatch.setattr(_launch, "_cupy", lambda: fake)
        return fake

    monkeypatch.setattr(_prebuilt, "PACKAGE_DIR", tmp_path / "package")
    monkeypatch.delenv(_prebuilt.PREBUILT_ENV, raising=False)
    monkeypatch.delenv(_prebuilt.SPECS_ENV, raising=False)
    _forget_modules()
    yield install
    _forget_modules()  # nothing the fake made outlives the test


def _forget_modules():
    for cache in (_launch._module, _launch._compiled, _launch._function):
        cache.cache_clear()


EXPRESSION = "gbla_store_set<double, int>"


def _store_set():
    return _launch.function("entries.cu", EXPRESSION, name_expressions=(EXPRESSION,))


def _key_of(made):
    return _prebuilt.key(made["code"], made["options"], made["name_expressions"], False)


def test_without_a_prebuilt_module_nvrtc_compiles_and_the_spec_is_recorded(
    fake_cupy, tmp_path, monkeypatch
):
    monkeypatch.setenv(_prebuilt.SPECS_ENV, str(tmp_path / "specs"))
    fake = fake_cupy()
    kernel = _store_set()
    (made,) = fake.made
    assert made["code"] == _launch.source("entries.cu") and made["options"] == _launch.OPTIONS
    assert made["name_expressions"] == (EXPRESSION,)
    assert kernel.function.kernel == EXPRESSION
    spec = json.loads((tmp_path / "specs" / f"{_key_of(made)}.json").read_text())
    assert spec["code"] == made["code"] and spec["name_expressions"] == [EXPRESSION]


def _with_prebuilt_store_set(fake_cupy, folder, monkeypatch, refuse=False):
    """(the stand-in CuPy, the module's key, the kernel) of gbla_store_set loaded again once
    a prebuilt module of its key (lowered name _Z14gbla_store_set) is in ``folder``."""
    fake = fake_cupy()
    _store_set()
    key = _key_of(fake.made[0])
    _forget_modules()
    _prebuilt_files(folder, key, names={EXPRESSION: "_Z14gbla_store_set"})
    monkeypatch.setenv(_prebuilt.PREBUILT_ENV, str(folder))
    fake = fake_cupy(refuse=refuse)
    return fake, key, _store_set()


def test_a_prebuilt_module_is_loaded_by_path_and_its_kernels_by_lowered_name(
    fake_cupy, tmp_path, monkeypatch
):
    fake, key, kernel = _with_prebuilt_store_set(fake_cupy, tmp_path / "mine", monkeypatch)
    assert fake.made == [{"path": str(tmp_path / "mine" / f"{key}.sm_90.cubin")}]
    assert fake.looked_up == ["_Z14gbla_store_set"]
    assert kernel.function.kernel == "_Z14gbla_store_set"


def test_a_prebuilt_module_the_driver_refuses_is_compiled_instead(fake_cupy, tmp_path, monkeypatch):
    fake, _, kernel = _with_prebuilt_store_set(
        fake_cupy, tmp_path / "mine", monkeypatch, refuse=True
    )
    assert [sorted(m) for m in fake.made] == [
        ["path"],
        ["code", "enable_cooperative_groups", "name_expressions", "options"],
    ]
    assert kernel.function.kernel == EXPRESSION


def test_a_cooperative_module_is_never_taken_prebuilt(fake_cupy, tmp_path, monkeypatch):
    fake = fake_cupy()
    _launch.function("loop.cu", "gbla_loop_test", cooperative=True)
    made = fake.made[0]
    key = _prebuilt.key(made["code"], made["options"], None, True)
    _forget_modules()
    _prebuilt_files(tmp_path / "mine", key)
    monkeypatch.setenv(_prebuilt.PREBUILT_ENV, str(tmp_path / "mine"))
    fake = fake_cupy()
    _launch.function("loop.cu", "gbla_loop_test", cooperative=True)
    assert "code" in fake.made[0] and fake.made[0]["enable_cooperative_groups"]


@pytest.mark.nvcc
@pytest.mark.skipif(NVRTC is None, reason="no NVRTC library")
def test_a_recorded_module_builds_to_a_cubin_that_the_loader_then_finds(
    fake_cupy, tmp_path, monkeypatch
):
    monkeypatch.setenv(_prebuilt.SPECS_ENV, str(tmp_path / "specs"))
    fake_cupy()
    _store_set()
    (spec,) = (tmp_path / "specs").glob("*.json")
    written = _prebuilt.build(spec, tmp_path / "out", ["90"], ptx="80")
    cubin, ptx, meta = written
    assert ptx.name.endswith(".compute_80.ptx") and b".target sm_80" in ptx.read_bytes()
    assert cubin.name.endswith(".sm_90.cubin") and cubin.read_bytes()[:4] == b"\x7fELF"
    names = json.loads(meta.read_text())["names"]
    assert list(names) == [EXPRESSION] and names[EXPRESSION].startswith("_Z")
    monkeypatch.setenv(_prebuilt.PREBUILT_ENV, str(tmp_path / "out"))
    found = _prebuilt.find(spec.stem, "90")
    assert found.path == cubin and found.names == names
    # the tool does the same for a folder of specs
    import importlib.util
    from pathlib import Path

    tool = Path(__file__).parents[1] / "tools" / "build_kernels.py"
    module_spec = importlib.util.spec_from_file_location("build_kernels", tool)
    build_kernels = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(build_kernels)
    args = [str(tmp_path / "specs"), "--out", str(tmp_path / "tool"), "--arch", "90"]
    assert build_kernels.main(args) == 0
    assert (tmp_path / "tool" / cubin.name).read_bytes() == cubin.read_bytes()
    # a spec whose code no longer matches its key is refused
    bad = json.loads(spec.read_text())
    bad["code"] += "\n"
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="does not match its code"):
        _prebuilt.build(tmp_path / "bad.json", tmp_path / "out", ["90"])
