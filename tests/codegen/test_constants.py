"""Constants: scalars, None and short tuples are written where they are used; arrays become
module constants (hex bytes when large) that round-trip exactly; attribute values of every
supported kind print as valid literals."""
from __future__ import annotations

import ast
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amber.codegen import generate
from amber.codegen.literal import HEX_ARRAY_SIZE, INLINE_ARRAY_SIZE, literal
from amber.codegen.pyast import to_source
from amber.graph import Builder, Graph, InsertPoint, Tensor
from amber.ops import Dyn


def const_graph(value, op: str = "add") -> Graph:
    """x -> x <op> value, the value a constant node."""
    t = Tensor(np.shape(value), np.asarray(value).dtype) if isinstance(value, np.ndarray) \
        else Tensor((3,), np.float32)
    g = Graph("use_const")
    x = g.body.add_param(t, "x")
    b = Builder(InsertPoint.at_end(g.body))
    g.body.set_results([b.op(op, x, b.constant(value, name="weight"))])
    return g


def eval_literal(value):
    return eval(to_source(ast.Expression(literal(value))), {"np": np})  # noqa: S307


@pytest.mark.parametrize("value", [
    0, -7, 2**70, 1.5, -0.0, math.inf, -math.inf, True, None, "text\n'q'", b"\x00b", ...,
    slice(1, None, -2), (1, (2.5, None)), np.dtype(np.float32), np.dtype(np.bool_),
    np.dtype("<U3"), int, ValueError, np.float16, np.float32(0.1), np.int8(-3), np.bool_(True),
    complex(1, -2), np.array([[1, 2]], np.int64), np.zeros((0, 3), np.float32)])
def test_literals_rebuild_the_value(value) -> None:
    back = eval_literal(value)
    if isinstance(value, np.dtype):  # spelled as the scalar type (`np.float32`) when it has one
        assert np.dtype(back) == value
        return
    assert type(back) is type(value)
    if isinstance(value, np.ndarray):
        assert back.dtype == value.dtype and back.shape == value.shape
        np.testing.assert_array_equal(back, value)
    elif isinstance(value, float):
        assert math.copysign(1, back) == math.copysign(1, value) and back == value
    else:
        assert back == value


def test_nan_literal() -> None:
    assert math.isnan(eval_literal(math.nan))
    assert to_source(ast.Expression(literal(math.nan))).strip() == "float('nan')"


def test_dyn_and_subscript_slices() -> None:
    index = literal((Dyn(0), slice(1, Dyn(1)), ...), dyn=[ast.Name("i"), ast.Name("n")],
                    subscript=True)
    tree = ast.Subscript(value=ast.Name("x"), slice=index)
    assert to_source(ast.Expression(tree)).strip() == "x[i, 1:n, ...]"


def test_scalar_constants_are_inlined(load_code) -> None:
    code = generate(const_graph(2.5, "mul"))
    assert "return x * 2.5" in code.source or "= x * 2.5" in code.source
    assert "weight" not in code.source


@settings(max_examples=20, deadline=None)
@given(st.integers(INLINE_ARRAY_SIZE + 1, 3 * HEX_ARRAY_SIZE), st.sampled_from(
    [np.float32, np.float64, np.int32, np.float16]))
def test_array_constants_roundtrip_exactly(size: int, dtype) -> None:
    rng = np.random.default_rng(size)
    value = (rng.standard_normal(size) * 1000).astype(dtype)
    code = generate(const_graph(value))
    namespace: dict = {}
    exec(code.source, namespace)  # noqa: S102
    assert "WEIGHT = " in code.source
    assert ("bytes.fromhex" in code.source) == (size > HEX_ARRAY_SIZE)
    np.testing.assert_array_equal(namespace["WEIGHT"], value)
    assert namespace["WEIGHT"].dtype == value.dtype
    np.testing.assert_array_equal(namespace[code.function_name](value), value + value)


@pytest.mark.parametrize("value, full", [
    (np.full((16, 64), 1 / 1024, np.float32), True), (np.full(40, -0.0), True),
    (np.full((3, 7), 7, np.int8), True), (np.ones(17, bool), True),
    (np.full(20, 65504, np.float16), True), (np.full(20, np.nan, np.float32), False),
    (np.concatenate([np.zeros(19), [-0.0]]), False), (np.r_[np.ones(30), 2.0], False)])
def test_an_array_of_one_repeated_value_is_written_with_np_full(value, full) -> None:
    """A module constant of one finite value repeated (a mean's folded gradient) is written as
    `np.full(...)`, bits included: not when one element differs, if only in a zero's sign."""
    code = generate(const_graph(value))
    namespace: dict = {}
    exec(code.source, namespace)  # noqa: S102
    assert ("WEIGHT = np.full(" in code.source) == full
    assert namespace["WEIGHT"].dtype == value.dtype and namespace["WEIGHT"].shape == value.shape
    assert namespace["WEIGHT"].tobytes() == value.tobytes()


def test_small_arrays_are_written_inline() -> None:
    value = np.array([1.0, -2.0, np.inf], np.float32)
    code = generate(const_graph(value))
    assert "np.array([1.0, -2.0, float('inf')], dtype=np.float32)" in code.source
    assert "WEIGHT" not in code.source


def test_returned_constant_array_is_a_fresh_copy(load_code) -> None:
    g = Graph("give")
    b = Builder(InsertPoint.at_end(g.body))
    g.body.set_results([b.constant(np.arange(100.0), name="table")])
    fn = load_code(generate(g))
    first = fn()
    first[:] = -1  # the caller owns what it gets
    np.testing.assert_array_equal(fn(), np.arange(100.0))


def test_list_constant_is_fresh_per_call(load_code) -> None:
    g = Graph("fresh_list")
    x = g.body.add_param(Tensor((), np.float32), "x")
    b = Builder(InsertPoint.at_end(g.body))
    items = b.constant([1, 2], name="items")
    g.body.set_results([b.op("list_append", items, x, name="items")])
    fn = load_code(generate(g))
    assert fn(np.float32(3)) == [1, 2, np.float32(3)]
    assert fn(np.float32(4)) == [1, 2, np.float32(4)]
