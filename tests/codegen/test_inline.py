"""Values read once by the next statement of their line are written inside it (`if x.sum() > 0:`),
and one-result Ifs whose branches are single expressions become `and`/`or`/`a if c else b`; but
never so as to reorder work, move it into a loop, drop a user's name or a comment's line."""
from __future__ import annotations

import numpy as np

from amber.graph import parse_graph


def body(source: str) -> str:
    """The entry function of a generated module (the last definition), comments dropped."""
    text = source[source.rindex("\ndef ") + 1:]
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


X = np.array([1.0, -2.0, 4.0], np.float32)


def test_test_of_an_if_is_written_in_place(check_graph) -> None:
    graph = parse_graph("""
    graph @f(%x: f32[3]) {
      %0 = sum(%x) : f32[]                      # m.py:2:4
      %1 = constant(value=0.0) : float          # m.py:2:4
      %2 = gt(%0, %1) : b1[]                    # m.py:2:4
      %y = if %2 : f32[3] {                     # m.py:2:4
        then { %y_1 = neg(%x) : f32[3]          # m.py:3:8
               yield %y_1 }
        else { yield %x }
      }
      return %y
    }""")
    code = check_graph(graph, (X,), (-X,))
    assert "    if x.sum() > 0.0:\n        y = -x\n" in body(code.source)


def test_values_read_twice_named_or_from_another_line_keep_their_statements(check_graph) -> None:
    graph = parse_graph("""
    graph @f(%x: f32[3]) {
      %e = exp(%x) : f32[3]                     # m.py:2:4
      %twice = mul(%e, %e) : f32[3]             # m.py:2:4
      %h = tanh(%twice) : f32[3]                # m.py:3:4
      %k = relu(%h) : f32[3]                    # m.py:3:4
      %out = add(%k, %x) : f32[3]               # m.py:4:4
      return %out
    }""")
    code = check_graph(graph, (X,))
    assert body(code.source).splitlines()[1:] == [
        "    e = np.exp(x)", "    twice = e * e", "    h = np.tanh(twice)",
        "    k = np.maximum(h, 0)", "    out = k + x", "    return out"]


def test_inlining_never_reorders_work(check_graph) -> None:
    """`b + a` evaluates b first: a (computed before b) may not move in after it."""
    graph = parse_graph("""
    graph @f(%x: f32[3], %y: f32[1]) {
      %0 = int(%y) : int
      %1 = float(%x) : float
      %c = add(%1, %0) : float
      return %c
    }""")
    code = check_graph(graph, (X, np.ones(1, np.float32)), (X[:1], np.ones(1, np.float32)))
    assert "    t = int(y)\n    c = float(x) + t\n" in body(code.source)


def test_no_work_moves_past_an_effect_or_into_a_loop(check_graph) -> None:
    graph = parse_graph("""
    graph @f(%x: f32[3], %n: int) {
      %0 = sum(%x) : f32[]
      %p = print(%x) : none
      %1 = mean(%x) : f32[]
      %zero = constant(value=0) : int
      %one = constant(value=1) : int
      %acc = for %zero, %n, %one, %0 : f32[] {
        body(%i: int, %a: f32[]) { %a_1 = add(%a, %1) : f32[]; yield %a_1 }
      }
      return %acc
    }""")
    code = check_graph(graph, (X, 3))
    text = body(code.source)
    assert "    acc = x.sum()\n    print(x)\n    x_mean = x.mean()\n" in text
    assert "        acc = acc + x_mean\n" in text


WHILE_AND = """
graph @f(%x: f32[3], %n: int) {
  %zero = constant(value=0) : int
  %false = constant(value=False) : bool
  %i, %brk = while %zero, %false : int, bool {
    cond(%i_1: int, %brk_1: bool) {
      %c = lt(%i_1, %n) : bool
      %r = if %c : bool {
        then { %nb = not(%brk_1) : bool; yield %nb }
        else { yield %c }
      }
      yield %r
    }
    body(%i_2: int, %brk_2: bool) {
      %one = constant(value=1) : int
      %i_3 = add(%i_2, %one) : int
      %big = gt(%i_3, %BOUND) : bool
      yield %i_3, %big
    }
  }
  return %i
}"""


def test_a_short_circuit_condition_is_one_expression(check_graph) -> None:
    code = check_graph(parse_graph(WHILE_AND.replace("%BOUND", "%n")), (X, 0), (X, 4))
    assert "    while i < n and not brk:\n" in body(code.source)
    assert "True" not in body(code.source) and "break" not in body(code.source)


def test_or_and_conditional_expressions(check_graph) -> None:
    graph = parse_graph("""
    graph @f(%x: f32[3], %n: int) {
      %zero = constant(value=0) : int
      %0 = lt(%n, %zero) : bool                    # m.py:2:4
      %big = if %0 : bool {                        # m.py:2:4
        then { yield %0 }
        else { %ten = constant(value=10) : int     # m.py:2:4
               %1 = gt(%n, %ten) : bool            # m.py:2:4
               yield %1 }
      }
      %y = if %big : f32[3] {                      # m.py:3:4
        then { %y_1 = neg(%x) : f32[3]             # m.py:3:4
               yield %y_1 }
        else { %two = constant(value=2.0) : float  # m.py:3:4
               %y_2 = mul(%x, %two) : f32[3]       # m.py:3:4
               yield %y_2 }
      }
      return %y, %big
    }""")
    code = check_graph(graph, (X, -1), (X, 5), (X, 11))
    text = body(code.source)
    assert "    big = n < 0 or n > 10\n" in text
    assert "    y = -x if big else x * 2.0\n" in text


def test_the_returned_value_is_computed_in_the_return(check_graph) -> None:
    graph = parse_graph("""
    graph @f(%x: f32[3]) {
      meta {'return_loc': ('m.py', 3, 4, 'return relu(x) + 1')}
      %0 = relu(%x) : f32[3]                    # m.py:3:11
      %one = constant(value=1.0) : float        # m.py:3:11
      %1 = add(%0, %one) : f32[3]               # m.py:3:11
      return %1
    }""")
    code = check_graph(graph, (X,))
    assert body(code.source).splitlines()[1:] == ["    return np.maximum(x, 0) + 1.0"]
