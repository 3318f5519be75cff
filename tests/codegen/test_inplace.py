"""`node.attrs["__inplace__"] = k` (set by memory planning): the op's `inplace` form writes into
input k's buffer and the result keeps input k's variable (for results of at least
`INPLACE_MIN_ELEMENTS`, or of any size in a loop body; smaller ones outside loops are computed
into new arrays)."""
from __future__ import annotations

import numpy as np
import pytest

import amber
from amber.codegen import INPLACE_ATTR, generate
from amber.codegen.lowering import INPLACE_MIN_ELEMENTS
from amber.graph import Builder, Graph, InsertPoint, Tensor, run_graph
from amber.ops import OpDef

SIZE = INPLACE_MIN_ELEMENTS
F4 = Tensor((SIZE,), np.float32)


def _same(x, *rest, **attrs):
    return x


add = OpDef("test_add", ("x", "y"), kernel=np.add, infer=_same, emit="x + y",
            inplace="np.add(x, y, out=out)", fresh=True)
scale = OpDef("test_scale", ("x",), kernel=lambda x, by: x * np.float32(by), infer=_same,
              emit="x * np.float32(by)", inplace="np.multiply(x, np.float32(by), out=out)",
              attrs={"by": 2.0}, fresh=True)


def chain(read_t_later: bool = False) -> tuple[Graph, list]:
    """t = exp(x); u = t + x; w = u * 3 (+ t when `read_t_later`)."""
    g = Graph("chain")
    x = g.body.add_param(F4, "x")
    b = Builder(InsertPoint.at_end(g.body))
    t = b.op("exp", x, name="t")
    u = b.op(add, t, x, name="u")
    w = b.op(scale, u, name="w", by=3.0)
    g.body.set_results([b.op(add, w, t, name="r") if read_t_later else w])
    return g, [u.producer, w.producer]


def test_inplace_chain_reuses_one_buffer(load_code) -> None:
    graph, nodes = chain()
    x = np.linspace(-1, 1, SIZE).astype(np.float32)
    want = run_graph(graph, x)  # NOTE: the reference runs before the marks are set
    for node in nodes:
        node.attrs[INPLACE_ATTR] = 0
    code = generate(graph)
    assert "    t = np.exp(x)\n    np.add(t, x, out=t)\n" in code.source
    assert "    np.multiply(t, np.float32(3.0), out=t)\n    return t\n" in code.source
    before = x.copy()
    got = load_code(code)(x)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(x, before)  # the caller's array is untouched


def test_inplace_over_a_value_read_later_is_refused() -> None:
    graph, nodes = chain(read_t_later=True)
    nodes[0].attrs[INPLACE_ATTR] = 0
    with pytest.raises(ValueError, match="read afterwards"):
        generate(graph)


def test_inplace_over_a_graph_input_is_refused() -> None:
    graph, nodes = chain()
    nodes[0].attrs[INPLACE_ATTR] = 1  # x: the caller's buffer
    with pytest.raises(ValueError, match="graph input"):
        generate(graph)


def test_codegen_markers_are_not_template_attributes(load_code) -> None:
    """Any `__`-prefixed attribute is codegen's, never filled into a template."""
    graph, nodes = chain()
    nodes[1].attrs["__note__"] = "fused"
    code = generate(graph)
    assert "fused" not in code.source
    x = np.ones(SIZE, np.float32)
    np.testing.assert_array_equal(load_code(code)(x), (np.exp(x) + x) * np.float32(3.0))


def test_operators_run_in_place_as_augmented_assignments(load_code) -> None:
    """`t += x` is `np.add(t, x, out=t)`; a commuting operator also takes its buffer second."""
    g = Graph("aug")
    x = g.body.add_param(F4, "x")
    b = Builder(InsertPoint.at_end(g.body))
    t = b.op("exp", x, name="t")
    u = b.op("add", t, x, name="t")
    v = b.op("mul", x, u, name="t")
    w = b.op("sub", v, b.constant(1.0), name="t")
    g.body.set_results([w])
    x_value = np.linspace(-1, 1, SIZE).astype(np.float32)
    want = run_graph(g, x_value)
    for node, k in ((u.producer, 0), (v.producer, 1), (w.producer, 0)):
        node.attrs[INPLACE_ATTR] = k
    code = generate(g)
    assert "    t = np.exp(x)\n    t += x\n    t *= x\n    t -= 1.0\n    return t\n" in code.source
    np.testing.assert_array_equal(load_code(code)(x_value), want)


def test_small_results_are_computed_into_new_arrays(load_code) -> None:
    g = Graph("small")
    x = g.body.add_param(Tensor((SIZE - 1,), np.float32), "x")
    b = Builder(InsertPoint.at_end(g.body))
    t = b.op("exp", x, name="t")
    u = b.op("add", t, x, name="t")
    u.producer.attrs[INPLACE_ATTR] = 0
    g.body.set_results([u])
    code = generate(g)
    assert "    t = np.exp(x) + x\n" in code.source
    x_value = np.ones(SIZE - 1, np.float32)
    np.testing.assert_array_equal(load_code(code)(x_value), np.exp(x_value) + x_value)


def if_else_loop(x):
    for _ in range(200):
        if x.sum() > 0:
            x = x * 0.5 - 1.0
        else:
            x = x * 0.5 + 1.0
    return x


def test_a_small_chain_in_a_loop_runs_on_the_carried_buffer() -> None:
    """16 floats: the loop starts from one copy of the caller's array, then every iteration
    writes into it (as hand-written NumPy would), where it made two arrays per iteration."""
    jitted = amber.jit(if_else_loop, backend="numpy")
    x = np.linspace(-1, 1, 16).astype(np.float32)
    before = x.copy()
    got = jitted(x)
    np.testing.assert_array_equal(got, if_else_loop(before))
    np.testing.assert_array_equal(x, before)  # the caller's array is untouched
    assert "    x = x.copy()\n    for _ in range(200):\n" in jitted.code
    assert "            x *= F32_0_5\n            x -= F32_1_0\n" in jitted.code


def data_dependent_loop(x):
    for _ in range((x > 2.0).sum()):
        x = x * 0.5 - 1.0
    return x


def test_a_loop_that_may_not_run_returns_the_argument_itself() -> None:
    """No trip: eager returns the caller's own array, and so does the compiled function (a
    copy made before the loop would hand back another array)."""
    jitted = amber.jit(data_dependent_loop, backend="numpy")
    x = np.zeros(16, np.float32)
    assert jitted(x) is x
    assert "copy" not in jitted.code
