"""The reference interpreter against plain Python: straight-line math, loops with branches,
`for` with several carried values and `range` semantics, effects in order, unbound values."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amber.graph import parse_graph, run_graph, verify

F32 = np.float32
small = st.integers(-5, 9)


def vec(values: list[float]) -> np.ndarray:
    return np.array(values, F32)


def test_straight_line(samples) -> None:
    graph = samples.straight_line()
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((2, 2, 3)).astype(F32)
    got = run_graph(graph, x, y)
    assert got.dtype == F32
    np.testing.assert_allclose(got, samples.straight_line_ref(x, y), rtol=1e-6)


@settings(max_examples=30, deadline=None)
@given(small, st.lists(st.floats(-100, 100, width=32), min_size=3, max_size=3))
def test_if_in_while(samples, n: int, acc: list[float]) -> None:
    graph = samples.if_in_while()
    got = run_graph(graph, n, vec(acc))
    np.testing.assert_allclose(got, samples.if_in_while_ref(n, vec(acc)), rtol=1e-6)


@pytest.mark.parametrize("n", [-1, 0, 1, 2, 5, 8])
def test_for_with_carried_values(samples, n: int) -> None:
    x = vec([1.5, -2.0])
    s, p, k = run_graph(samples.for_carried(), n, x)
    ref_s, ref_p, ref_k = samples.for_carried_ref(n, x)
    assert k == ref_k and type(k) is int
    np.testing.assert_allclose(s, ref_s)
    np.testing.assert_allclose(p, ref_p)


RANGE = """
graph @r(%start: int, %stop: int, %step: int) {
  %items = list_new() : list[any]
  %out = for %start, %stop, %step, %items : list[int] {
    body(%i: int, %acc: list[int]) {
      %next = list_append(%acc, %i) : list[int]
      yield %next
    }
  }
  return %out
}
"""


@settings(max_examples=50, deadline=None)
@given(small, small, small.filter(lambda s: s != 0))
def test_for_follows_range(start: int, stop: int, step: int) -> None:
    graph = parse_graph(RANGE)
    verify(graph)
    assert run_graph(graph, start, stop, step) == list(range(start, stop, step))


def test_for_step_zero_raises_like_range() -> None:
    with pytest.raises(ValueError, match="must not be zero"):
        run_graph(parse_graph(RANGE), 0, 3, 0)


def test_effects_run_in_order(samples, capsys) -> None:
    x = vec([1.0, 2.0])
    items = run_graph(samples.effects(), x)
    assert len(items) == 2 and all(item is x for item in items)
    assert capsys.readouterr().out == f"{x}\nn =|2\n"


UNBOUND = """
graph @u(%c: bool, %x: int) {
  %y = if %c : any {
    then { yield %x }
    else { %u = undefined(name='y') : any; yield %u }
  }
  %z = if %c : any {
    then { yield %y }
    else { yield %y }
  }
  return %z
}
"""


def test_unbound_flows_through_regions_but_not_into_a_return() -> None:
    graph = parse_graph(UNBOUND)
    verify(graph)
    assert run_graph(graph, True, 7) == 7
    with pytest.raises(UnboundLocalError, match="'y'"):
        run_graph(graph, False, 7)


def test_unbound_as_op_input_raises() -> None:
    graph = parse_graph("""
        graph @u(%x: int) {
          %u = undefined(name='total') : any
          %p = print(%u) : none
          return %x
        }""")
    with pytest.raises(UnboundLocalError, match="local variable 'total'"):
        run_graph(graph, 1)


def test_raise_and_results_arity() -> None:
    graph = parse_graph("""
        graph @r(%c: bool, %x: int) {
          ^if = if %c {
            then { %m = constant(value='bad value') : str
                   %e = raise(%m, exc_type=ValueError) : none; yield }
            else { yield }
          }
          return %x, %x
        }""")
    verify(graph)
    assert run_graph(graph, False, 4) == (4, 4)
    with pytest.raises(ValueError, match="bad value"):
        run_graph(graph, True, 4)
    empty = parse_graph("graph @e() { return }")
    assert run_graph(empty) is None
    with pytest.raises(TypeError, match="takes 0 argument"):
        run_graph(empty, 1)
