"""Arguments and results beyond arrays, scalars and tuples: dicts of arrays and cells passed in
(their arrays become graph inputs by path: `0.key`, `1.fc.weight`), `amber.jit` functions called
from compiled code (inlined), and dicts returned."""
import numpy as np
import pytest

import amber
from amber import Parameter, nn
from amber.frontend import build_graph
from amber.frontend.reference import agree

X = np.array([1.0, -2.0, 3.0], np.float32)


def pick(d):
    if d["a"].sum() > d["b"].sum():
        return d["a"] * d["scale"]
    return d["b"]


def test_dict_argument_items_are_inputs_by_key():
    d = {"a": X, "b": X * 2.0, "scale": 3.0}
    result = agree(pick, d)
    assert result.graph.input_paths == ("0.a", "0.b")
    assert [v.name for v in result.graph.inputs] == ["d_a", "d_b"]
    agree(pick, {"a": X * 2.0, "b": X, "scale": 0.5})


class Scale(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(3, 2)
        self.k = 2.0

    def construct(self, x):
        return self.fc(x) * self.k


def run_model(model, x):
    y = model(x)
    if y.sum() > 0:
        y = y - 1.0
    return y


def test_cell_argument_parameters_are_inputs_by_path():
    amber.set_seed(0)
    model = Scale()
    result = agree(run_model, model, X[None])
    assert result.graph.input_paths == ("1", "0.fc.weight", "0.fc.bias")
    assert [v.name for v in result.graph.inputs] == ["x", "model.fc.weight", "model.fc.bias"]
    names = {g.description for g in result.guards}
    assert {"argument 0.k", "argument 0.fc.weight"} <= names
    assert all(g.holds(None) for g in result.guards)
    model.k = 3.0
    assert not all(g.holds(None) for g in result.guards)  # the graph folded k = 2.0 in


def test_cell_argument_array_guard_checks_shape():
    amber.set_seed(0)
    model = Scale()
    result = build_graph(run_model, (model, X[None]))
    model.fc.weight = Parameter(np.zeros((4, 3), np.float32))
    assert not all(g.holds(None) for g in result.guards)


def test_jit_compiled_cell_argument_follows_changes(monkeypatch):
    monkeypatch.setenv("AMBER_CACHE", "0")
    amber.set_seed(0)
    model = Scale()
    compiled = amber.jit(run_model)
    for k in (2.0, 3.0):
        model.k = k
        np.testing.assert_allclose(compiled(model, X[None]), run_model(model, X[None]),
                                   rtol=1e-6)
    model.fc.weight[...] = 0.5  # new values in the same Parameter: read on each call
    np.testing.assert_allclose(compiled(model, X[None]), run_model(model, X[None]), rtol=1e-6)


def _double_positive(v):
    if v.sum() > 0:
        return v * 2.0
    return v


DOUBLE = amber.jit(_double_positive)


def calls_jit_function(x):
    return DOUBLE(x) + DOUBLE(-x)


def test_jit_function_called_inside_is_inlined():
    result = agree(calls_jit_function, X)
    assert any("_double_positive" in s for s in result.sources)
    assert "global DOUBLE" in {g.description for g in result.guards}
    assert all(g.holds(None) for g in result.guards)


def returns_dict(x):
    n = 0
    if x.sum() > 0:
        n = 1
    return {"y": x * 2.0, "n": n, "parts": (x[0], x[1:])}


@pytest.mark.parametrize("x", [X, -X])
def test_dict_result(x, monkeypatch):
    monkeypatch.setenv("AMBER_CACHE", "0")
    result = agree(returns_dict, x)
    (out,) = result.graph.outputs
    assert out.producer.name == "make_dict" and out.producer.attrs["keys"] == ("y", "n", "parts")
    compiled = amber.jit(returns_dict)(x)
    assert list(compiled) == ["y", "n", "parts"] and compiled["n"] == returns_dict(x)["n"]
