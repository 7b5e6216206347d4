"""gbla.datasets: the small real graphs shipped in the package load as documented and match
the files they were converted from (../shared/data, when present)."""

from importlib import resources

import numpy as np
import pytest

import gbla
import gbla.datasets

from .graphs import read_metis, read_mtx

# name -> (vertices, undirected edges, reader of the source file in ../shared/data)
EXPECTED = {
    "power_grid": (4941, 6594, lambda: read_metis("small/power.graph")),
    "facebook": (4039, 88234, lambda: read_mtx("social/ego-Facebook-combined.mtx.gz")),
}


def test_names_lists_every_shipped_graph():
    assert gbla.datasets.names() == list(EXPECTED)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_load_gives_the_documented_symmetric_simple_graph(name, device):
    n, m, _ = EXPECTED[name]
    A = gbla.datasets.load(name, device=device)
    S = A.to_scipy()
    assert A.device == device and A.shape == (n, n) and A.nvals == 2 * m
    assert A.is_iso and A.dtype == np.bool_ and A.T is A
    assert (S != S.T).nnz == 0 and S.diagonal().sum() == 0


@pytest.mark.parametrize("name", list(EXPECTED))
def test_load_matches_the_source_file(name):
    source = EXPECTED[name][2]()  # skips when ../shared/data is absent
    source = ((source + source.T) > 0).astype(bool)  # a symmetric file stores each edge once
    assert (gbla.datasets.load(name, device="cpu").to_scipy() != source).nnz == 0


@pytest.mark.parametrize("name", list(EXPECTED))
def test_describe_states_size_and_origin(name):
    n, m, _ = EXPECTED[name]
    text = gbla.datasets.describe(name)
    assert text.startswith(f"{name}: {n} vertices, {m} undirected edges; ")
    assert "via " in text and "\n" not in text


@pytest.mark.parametrize("name", list(EXPECTED))
def test_shipped_file_is_package_data_with_its_provenance(name):
    import gzip

    data = resources.files("gbla").joinpath("data")
    files = [f for f in data.iterdir() if f.name.endswith(".mtx.gz")]
    assert len(files) == len(EXPECTED)
    (entry,) = [f for f in files if f.name.startswith(name + ".")]
    assert len(entry.read_bytes()) < 250_000
    with entry.open("rb") as raw, gzip.open(raw, "rt") as f:
        head = [next(f) for _ in range(12)]
    assert head[0].startswith("%%MatrixMarket matrix coordinate pattern symmetric")
    comments = "".join(line for line in head if line.startswith("%"))
    assert "Origin:" in comments and "Licence:" in comments


@pytest.mark.parametrize("bad", ["karate", "", "POWER_GRID", None, 3])
def test_unknown_name_raises_and_lists_the_valid_names(bad):
    for call in (gbla.datasets.load, gbla.datasets.describe):
        with pytest.raises(gbla.UnknownName) as info:
            call(bad)
        assert str(info.value) == f"name must be one of {gbla.datasets.names()}; got {bad!r}"
        assert isinstance(info.value, KeyError)
