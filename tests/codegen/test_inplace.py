"""`node.attrs["__inplace__"] = k` (set by memory planning): the op's `inplace` form writes into
input k's buffer and the result keeps input k's variable."""
from __future__ import annotations

import numpy as np
import pytest

from amber.codegen import INPLACE_ATTR, generate
from amber.graph import Builder, Graph, InsertPoint, Tensor, run_graph
from amber.ops import OpDef

F4 = Tensor((4,), np.float32)


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
    x = np.linspace(-1, 1, 4).astype(np.float32)
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
    x = np.ones(4, np.float32)
    np.testing.assert_array_equal(load_code(code)(x), (np.exp(x) + x) * np.float32(3.0))
