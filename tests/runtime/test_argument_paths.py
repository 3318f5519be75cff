"""Dict and cell arguments: their arrays are gathered by input path on each call (`0.key`,
`1.fc.weight`), and a dict argument's key is its structure (keys, shapes, scalar values)."""
from __future__ import annotations

import numpy as np

import amber
from amber import nn
from amber.runtime.keys import call_key, describe_key, persistable
from amber.runtime.paths import make_input_gatherer


def test_gatherer_reads_dict_items_and_cell_arrays() -> None:
    net = nn.Dense(3, 2)
    d = {"a": np.ones(2, np.float32), "pair": (np.zeros(1), np.ones(1))}
    gather = make_input_gatherer(["1", "0.a", "0.pair.1", "2.weight", "net.bias"], 3)
    x = np.arange(3.0)
    got = gather((d, x, net), {"net": net})
    assert got[0] is x and got[1] is d["a"] and got[2] is d["pair"][1]
    weight, bias = got[3], got[4]
    assert type(weight) is np.ndarray and np.shares_memory(weight, net.weight)  # a Parameter,
    assert type(bias) is np.ndarray and np.shares_memory(bias, net.bias)  # passed as its array


def test_dict_keys_follow_structure_not_identity() -> None:
    a = {"w": np.zeros((2, 3), np.float32), "n": 3}
    b = {"w": np.ones((2, 3), np.float32), "n": 3}
    assert call_key((a,), {}) == call_key((b,), {})
    assert call_key((a,), {}) != call_key(({"w": a["w"], "n": 4},), {})
    assert call_key((a,), {}) != call_key(({"n": 3, "w": a["w"]},), {})  # key order matters
    assert call_key((a,), {}) != call_key(({"w": np.zeros((3, 3), np.float32), "n": 3},), {})
    assert describe_key(call_key((a,), {})) == "({'w': f32[2,3], 'n': int=3})"
    assert persistable(call_key((a,), {}))


def test_dict_argument_compiles_once_per_structure() -> None:
    def pick(d):
        return d["a"] * d["k"]

    compiled = amber.jit(pick)
    for value in (1.0, 2.0):
        d = {"a": np.full(3, value, np.float32), "k": 2.0}
        np.testing.assert_array_equal(compiled(d), pick(d))
    assert compiled.stats.compiles == 1
    d = {"a": np.ones(3, np.float32), "k": 5.0}
    np.testing.assert_array_equal(compiled(d), pick(d))
    assert compiled.stats.compiles == 2
