"""Saving and loading graphs: identical printed text after a round trip, arrays kept as npz
members (not JSON), every attribute kind preserved, damaged files rejected clearly."""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from amber.graph import (Builder, Graph, GraphFileError, InsertPoint, Loc, Node, load_graph,
                         print_graph, save_graph, verify)
from amber.graph.serialize import FORMAT, VERSION
from amber.graph.types import Tensor
from amber.ops import Dyn, lookup


def roundtrip(graph: Graph, path: Path) -> Graph:
    save_graph(graph, path)
    loaded = load_graph(path)
    assert print_graph(loaded) == print_graph(graph)
    return loaded


def test_samples_roundtrip(samples, tmp_path: Path) -> None:
    for name, (build, _) in samples.all.items():
        verify(roundtrip(build(), tmp_path / f"{name}.npz"))


def test_exact_path_and_no_leftovers(samples, tmp_path: Path) -> None:
    path = tmp_path / "graph.bin"   # no .npz suffix is added
    save_graph(samples.effects(), path)
    assert [p.name for p in tmp_path.iterdir()] == ["graph.bin"]


def test_arrays_are_npz_members(tmp_path: Path) -> None:
    weights = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    graph = Graph("w")
    b = Builder(InsertPoint.at_end(graph.body))
    graph.body.set_results([b.constant(weights, name="w"), b.constant(np.int8(-7), name="k")])
    path = tmp_path / "w.npz"
    loaded = roundtrip(graph, path)
    with np.load(path) as npz:
        assert sorted(npz.files) == ["a0", "a1", "graph.json"]
        np.testing.assert_array_equal(npz["a0"], weights)
        structure = json.loads(npz["graph.json"].tobytes())
    assert structure["format"] == FORMAT and structure["version"] == VERSION
    assert "0.0909" not in json.dumps(structure)   # no array element went into the JSON
    w, k = (n.attrs["value"] for n in loaded.walk())
    assert w.dtype == np.float32 and w.tobytes() == weights.tobytes()
    assert type(k) is np.int8 and k == -7


ATTRS = {"index": (Dyn(0), Ellipsis, slice(None, 2, -1), [1, (2,)], None),
         "dtype": np.dtype(np.float16), "exc": ValueError, "np_type": np.float32,
         "floats": (float("inf"), -0.0, 0.1), "nested": {"a": [True, {"b": "c"}]},
         "big": 2**80, "scalar": np.float64(1 / 3), "flags": np.array([True, False])}


def test_every_attribute_kind_and_loc_and_meta(tmp_path: Path) -> None:
    graph = Graph("attrs", param_paths=("fc.weight",), input_paths=("0", "1.key"),
                  return_loc=Loc("net.py", 9, 4, "return y"))
    x = graph.body.add_param(Tensor((2, "?"), np.float32), "x")
    loc = Loc("net.py", 7, 8, "y = x[0]")
    # not a valid getitem, but the file must keep whatever a node holds
    node = graph.body.append(Node(lookup("getitem"), [x], ATTRS, [x.type], ["y"], loc=loc))
    graph.body.set_results([node.output])
    got = next(roundtrip(graph, tmp_path / "a.npz").walk())
    assert got.loc == loc   # including the source text, which the text IR leaves out
    saved = got.parent.parent
    assert (saved.param_paths, saved.input_paths, saved.return_loc) == \
        (graph.param_paths, graph.input_paths, graph.return_loc)
    assert repr(got.attrs["index"]) == repr(ATTRS["index"])
    for key in ("dtype", "exc", "np_type", "nested", "big"):
        assert got.attrs[key] == ATTRS[key] and type(got.attrs[key]) is type(ATTRS[key])
    assert str(got.attrs["floats"]) == str(ATTRS["floats"])
    assert type(got.attrs["scalar"]) is np.float64 and got.attrs["scalar"] == 1 / 3
    np.testing.assert_array_equal(got.attrs["flags"], ATTRS["flags"])


def test_unsavable_attribute(tmp_path: Path) -> None:
    graph = Graph("bad")
    b = Builder(InsertPoint.at_end(graph.body))
    out = b.constant(1)
    out.producer.attrs["value"] = object()
    graph.body.set_results([out])
    with pytest.raises(TypeError, match="cannot save an attribute of type object"):
        save_graph(graph, tmp_path / "bad.npz")
    assert not list(tmp_path.iterdir())


def _rewrite(path: Path, change) -> None:
    """Rewrite the JSON member of a saved graph through `change(structure)`."""
    with np.load(path) as npz:
        members = {name: npz[name] for name in npz.files}
    structure = json.loads(members["graph.json"].tobytes())
    change(structure)
    members["graph.json"] = np.frombuffer(json.dumps(structure).encode(), np.uint8)
    with open(path, "wb") as f:
        np.savez(f, **members)


def _set(structure: dict, keys: tuple, value) -> None:
    target = structure
    for key in keys[:-1]:
        target = target[key]
    target[keys[-1]] = value


DAMAGE = [
    (("version",), 99, "version 99"),
    (("format",), "other", "not an amber graph file"),
    (("graph", "body", "nodes", 0, "inputs"), [12345], "damaged graph file"),
    (("graph", "body", "nodes", 0, "op"), "no_such_op", "damaged graph file"),
    (("graph", "body", "params", 0, 2), "f32[", "damaged graph file"),
    (("graph", "body", "nodes", 0, "attrs", "sep"), {"weird": 1}, "damaged graph file"),
]


@pytest.mark.parametrize("keys, value, message", DAMAGE, ids=[d[2] + str(i)
                                                               for i, d in enumerate(DAMAGE)])
def test_damaged_structure(samples, tmp_path: Path, keys, value, message: str) -> None:
    path = tmp_path / "g.npz"
    save_graph(samples.effects(), path)
    _rewrite(path, lambda s: _set(s, keys, value))
    with pytest.raises(GraphFileError, match=message):
        load_graph(path)


def test_damaged_bytes(samples, tmp_path: Path) -> None:
    path = tmp_path / "g.npz"
    save_graph(samples.straight_line(), path)
    data = path.read_bytes()
    for broken in (data[: len(data) // 2], b"not a zip at all", b""):
        path.write_bytes(broken)
        with pytest.raises(GraphFileError, match="not a readable amber graph file"):
            load_graph(path)
    with zipfile.ZipFile(path, "w") as z:   # a valid npz without the structure member
        z.writestr("a0.npy", b"")
    with pytest.raises(GraphFileError):
        load_graph(path)
    with pytest.raises(GraphFileError, match="No such file"):
        load_graph(tmp_path / "missing.npz")


def test_flipped_bytes_never_load_a_different_graph(samples, tmp_path: Path) -> None:
    path = tmp_path / "g.npz"
    graph = samples.if_in_while()
    save_graph(graph, path)
    data, expected = path.read_bytes(), print_graph(graph)
    rng = np.random.default_rng(0)
    for _ in range(150):
        damaged = bytearray(data)
        for at in rng.integers(0, len(data), 2):
            damaged[at] ^= int(rng.integers(1, 256))
        path.write_bytes(bytes(damaged))
        try:
            loaded = load_graph(path)
        except GraphFileError:
            continue
        assert print_graph(loaded) == expected   # only bytes the format ignores were hit
