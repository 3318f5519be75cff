"""Text IR round trips: print(parse(text)) == text for whatever the printer writes, every
attribute kind parses back to an identical value, and hand-written texts print canonically."""
from __future__ import annotations

import math
import textwrap
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amber.graph import (Builder, Graph, InsertPoint, Loc, Scalar, format_attr, parse_attr,
                         parse_graph, parse_type, print_graph, verify)
from amber.graph.types import (AnyType, ListType, NoneType, StrType, Tensor, TupleType,
                               type_of)
from amber.ops import Dyn
from amber.ops.symbolic import symbol

N, M = symbol("N"), symbol("M")


def same(a: Any, b: Any) -> bool:
    """Identical values: same Python type, and for arrays the same dtype, shape and bits."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray | np.generic):
        return a.dtype == b.dtype and np.shape(a) == np.shape(b) and \
            np.asarray(a).tobytes() == np.asarray(b).tobytes()
    if isinstance(a, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b) or (a != a and b != b)
    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, slice):
        return all(same(x, y) for x, y in zip((a.start, a.stop, a.step),
                                               (b.start, b.stop, b.step)))
    return a == b


def roundtrip(text: str) -> Graph:
    graph = parse_graph(text)
    assert print_graph(graph) == text
    return graph


def test_samples_roundtrip(samples) -> None:
    for build, _ in samples.all.values():
        graph = build()
        text = print_graph(graph)
        verify(roundtrip(text))


ATTRS = [
    0, -3, 2**70, 0.1, -0.0, 1e-300, float("inf"), -float("inf"), True, False, None, Ellipsis,
    "it's \"quoted\"\n\tü", "", slice(1, None, -1), slice(None, Dyn(0), None), (), (1,),
    ((1, 2), [3, (4,)], []), {"a": 1, (2, 3): [None]}, Dyn(3), (Dyn(0), ..., slice(None, 2, 1)),
    np.dtype(np.float32), np.dtype(np.bool_), np.dtype("<U3"), np.dtype("datetime64[ns]"),
    int, float, bool, str, ValueError, IndexError, np.float32,
    np.float32(0.1), np.float16(-2.5e-3), np.float64(1 / 3), np.int64(-5), np.uint8(255),
    np.bool_(True), np.array([0.1, -0.0, np.inf, -np.inf, 3e38], np.float32),
    np.array([[True, False], [False, True]]), np.arange(6, dtype=np.int64).reshape(2, 3, 1),
    np.array(2.5), np.zeros((0, 3), np.float32), np.array([2**64 - 1], np.uint64),
    np.array([1e-45, 65504.0], np.float64).astype(np.float16),
    N, (N, 16), (N // 2 - 2, (N + 1) // 2, 2 * N, 3 - N, M - N // 4), {"s": [N + 1]},
]


@pytest.mark.parametrize("value", ATTRS, ids=lambda v: type(v).__name__)
def test_attribute_roundtrip(value: Any) -> None:
    text = format_attr(value)
    assert same(parse_attr(text), value), text


def test_nan_attributes() -> None:
    assert math.isnan(parse_attr(format_attr(float("nan"))))
    back = parse_attr(format_attr(np.array([np.nan, 1.0], np.float32)))
    assert back.dtype == np.float32 and np.isnan(back[0]) and back[1] == 1.0


def test_small_arrays_print_inline() -> None:
    assert format_attr(np.array([1.0, 2.5], np.float32)) == "array<f32[2]>[1.0, 2.5]"
    assert format_attr(np.float32(0.1)) == "f32(0.1)"
    assert format_attr(np.dtype(np.int64)) == "i64"
    assert format_attr(Dyn(1)) == "$1"
    assert format_attr((N, N // 2 - 2)) == "(N, N//2-2)"
    assert format_attr((2 * N, (N + 1) // 2)) == "(sym<2*N>, sym<(N+1)//2>)"


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 2**32 - 1), max_size=8))
def test_float32_bits_roundtrip(bits: list[int]) -> None:
    array = np.array(bits, np.uint32).view(np.float32)
    back = parse_attr(format_attr(array))
    assert back.dtype == np.float32
    finite = ~np.isnan(array)
    assert back[finite].tobytes() == array[finite].tobytes()
    assert np.isnan(back[~finite]).all()


@settings(max_examples=50, deadline=None)
@given(st.floats(allow_nan=False), st.integers(), st.text(max_size=8))
def test_python_scalars_roundtrip(x: float, n: int, s: str) -> None:
    value = (x, n, s, [x, -n])
    assert same(parse_attr(format_attr(value)), value)


TYPES = [Tensor((2, "?", "N"), np.float32), Tensor((N, 1, 32, 32), np.float32),
         Tensor((N // 2 - 2, (N + 1) // 2, 2 * N + 3, M - N // 4, -(N // 2) + 7), np.int8),
         Tensor((), np.bool_), Scalar(int), Scalar(float),
         Scalar(bool), TupleType(()), TupleType((Scalar(int),)),
         TupleType((Tensor((3,), np.int64), ListType(Tensor((1,), np.float16)))), NoneType(),
         StrType(), AnyType(), ListType(AnyType())]


@pytest.mark.parametrize("kind", TYPES, ids=str)
def test_type_roundtrip(kind) -> None:
    assert parse_type(str(kind)) == kind


def _typed(value: Any) -> bool:
    try:
        type_of(value)
        return True
    except TypeError:
        return False


def test_every_attribute_in_a_graph_roundtrips() -> None:
    graph = Graph("consts")
    b = Builder(InsertPoint.at_end(graph.body))
    values = [b.constant(v, name="c") for v in ATTRS if _typed(v)]
    values.append(b.op("zeros", shape=(N, 2 * N + 1), name="z"))
    graph.body.set_results([b.op("make_tuple", *values)])
    graph.param_paths, graph.input_paths = ("fc.weight", "fc.bias"), ("0", "1.n")
    graph.return_loc = Loc("net.py", 3, 4, "return y")
    parsed = roundtrip(print_graph(graph))
    for old, new in zip(graph.walk(), parsed.walk()):
        assert same(old.attrs, new.attrs)
    assert (parsed.param_paths, parsed.input_paths) == (graph.param_paths, graph.input_paths)
    assert (parsed.return_loc.file, parsed.return_loc.line) == ("net.py", 3)


def test_locations_labels_names_and_defaults() -> None:
    graph = Graph("Net.construct")
    b = Builder(InsertPoint.at_end(graph.body), loc=Loc("net.py", 9, 4, "print(x)"))
    x = graph.body.add_param(Scalar(int), "x")
    first = b.op("print", x, name="")
    second = b.op("print", x, sep=", ", name="1st value", control_inputs=[first.producer])
    second.producer.loc = Loc("/tmp/a b.py", 12)
    graph.body.set_results([second])
    text = print_graph(graph)
    roundtrip(text)
    assert text == textwrap.dedent("""\
        graph @Net.construct(%x: int) {
          %0 = print(%x) : none                         # net.py:9:4
          %1st_value = print(%x, sep=', ') after %0 : none  # /tmp/a b.py:12
          return %1st_value
        }
        """)
    assert parse_graph(text).body.nodes[0].loc == Loc("net.py", 9, 4)


def test_repeated_hints_stay_unique() -> None:
    graph = Graph("g")
    b = Builder(InsertPoint.at_end(graph.body))
    values = [b.constant(k, name=n) for k, n in enumerate(["x", "x_1", "x", "", "x"])]
    graph.body.set_results(values)
    text = print_graph(graph)
    roundtrip(text)
    assert "return %x, %x_1, %x_2, %0, %x_3" in text
