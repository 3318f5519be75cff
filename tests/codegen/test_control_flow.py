"""If/While/For regions become native `if`/`while`/`for` with region results assigned where a
careful person would assign them; every graph is also run against the reference interpreter."""
from __future__ import annotations

import ast

import numpy as np
import pytest

from amber.graph import Block, Builder, Graph, InsertPoint, Scalar, Value, parse_graph


def function_text(source: str) -> str:
    """The entry function of a generated module (it is the last definition)."""
    return source[source.rindex("\ndef ") + 1:]


def test_if_else_assigns_the_result_in_each_branch(check_graph) -> None:
    graph = parse_graph("""
    graph @pick(%x: f32[3], %c: bool) {
      %y = if %c : f32[3] {
        then { %y_1 = relu(%x) : f32[3]; yield %y_1 }
        else { %y_2 = neg(%x) : f32[3]; yield %y_2 }
      }
      return %y
    }""")
    x = np.array([-1.0, 0.5, 2.0], np.float32)
    code = check_graph(graph, (x, True), (x, False))
    assert "    if c:\n        y = np.maximum(x, 0)\n    else:\n        y = -x\n" in code.source


def test_branch_yielding_an_outer_value_reuses_its_variable(check_graph) -> None:
    """`if c: x = f(x)` needs no `else` when the other branch keeps x."""
    graph = parse_graph("""
    graph @maybe(%x: f32[3], %c: bool) {
      %x_1 = if %c : f32[3] {
        then { %x_2 = relu(%x) : f32[3]; yield %x_2 }
        else { yield %x }
      }
      return %x_1
    }""")
    x = np.array([-1.0, 0.5, 2.0], np.float32)
    code = check_graph(graph, (x, True), (x, False))
    assert "    if c:\n        x = np.maximum(x, 0)\n    return x\n" in code.source
    assert "else" not in function_text(code.source)


def test_empty_then_branch_negates_the_condition(check_graph) -> None:
    graph = parse_graph("""
    graph @neg_branch(%x: int, %c: bool) {
      %x_2 = if %c : int {
        then { yield %x }
        else { %two = constant(value=2) : int; %x_1 = mul(%x, %two) : int; yield %x_1 }
      }
      return %x_2
    }""")
    code = check_graph(graph, (3, True), (3, False))
    assert "    if not c:\n        x = x * 2\n    return x\n" in code.source


def test_while_with_one_expression_condition(check_graph) -> None:
    graph = parse_graph("""
    graph @count(%n: int) {
      %zero = constant(value=0) : int
      %i, %s = while %zero, %zero : int, int {
        cond(%i_1: int, %s_1: int) { %c = lt(%i_1, %n) : bool; yield %c }
        body(%i_2: int, %s_2: int) {
          %s_3 = add(%s_2, %i_2) : int
          %one = constant(value=1) : int
          %i_3 = add(%i_2, %one) : int
          yield %i_3, %s_3
        }
      }
      return %s
    }""")
    code = check_graph(graph, (0,), (5,))
    body = function_text(code.source)
    assert "while i < n:" in body and "True" not in body and "break" not in body
    assert "s = s + i" in body and "i = i + 1" in body


HALVE = """
graph @halve(%x: int) {
  %y = while %x : int {
    cond(%y_1: int) {
      %two = constant(value=2) : int
      %r = mod(%y_1, %two) : int
      %zero = constant(value=0) : int
      %even = eq(%r, %zero) : bool
      %pos = ne(%y_1, %OTHER) : bool
      %c = logical_and(%even, %pos) : bool
      yield %c
    }
    body(%y_2: int) { %two_1 = constant(value=2) : int; %y_3 = floordiv(%y_2, %two_1) : int
                      yield %y_3 }
  }
  return %y
}"""


def test_while_condition_computed_in_one_expression(check_graph) -> None:
    code = check_graph(parse_graph(HALVE.replace("%OTHER", "%zero")), (48,), (7,), (0,))
    body = function_text(code.source)
    assert "    while np.logical_and(y % 2 == 0, y != 0):\n        y = y // 2\n" in body


def test_while_with_a_computed_condition_breaks(check_graph) -> None:
    """A value the condition reads twice needs a statement: the test moves into the body."""
    code = check_graph(parse_graph(HALVE.replace("%OTHER", "%r")), (48,), (7,), (0,))
    body = function_text(code.source)
    assert "while True:\n        r = y % 2\n" in body
    assert "        if not np.logical_and(r == 0, y != r):\n            break\n" in body


def test_print_in_a_loop_condition_runs_each_test(check_graph, capsys) -> None:
    graph = parse_graph("""
    graph @noisy(%n: int) {
      %zero = constant(value=0) : int
      %i = while %zero : int {
        cond(%i_1: int) { %p = print(%i_1) : none; %c = lt(%i_1, %n) : bool; yield %c }
        body(%i_2: int) { %one = constant(value=1) : int; %i_3 = add(%i_2, %one) : int
                          yield %i_3 }
      }
      return %i
    }""")
    check_graph(graph, (3,))
    printed = capsys.readouterr().out
    assert printed == "0\n1\n2\n3\n" * 2  # generated code, then the interpreter


@pytest.mark.parametrize("bounds, spelled", [
    ((0, 5, 1), "range(5)"), ((2, 7, 1), "range(2, 7)"), ((1, 8, 3), "range(1, 8, 3)"),
    ((6, -1, -2), "range(6, -1, -2)")])
def test_for_range_spelling(check_graph, bounds, spelled) -> None:
    start, stop, step = bounds
    graph = parse_graph(f"""
    graph @total(%x: int) {{
      %a = constant(value={start}) : int
      %b = constant(value={stop}) : int
      %c = constant(value={step}) : int
      %s = for %a, %b, %c, %x : int {{
        body(%i: int, %s_1: int) {{ %s_2 = add(%s_1, %i) : int; yield %s_2 }}
      }}
      return %s
    }}""")
    code = check_graph(graph, (10,))
    assert f"for i in {spelled}:" in code.source


def test_unused_loop_index_is_underscore(check_graph) -> None:
    graph = parse_graph("""
    graph @twice(%x: int, %n: int) {
      %zero = constant(value=0) : int
      %one = constant(value=1) : int
      %x_1 = for %zero, %n, %one, %x : int {
        body(%i: int, %x_2: int) { %x_3 = add(%x_2, %x_2) : int; yield %x_3 }
      }
      return %x_1
    }""")
    code = check_graph(graph, (3, 4), (3, 0))
    assert "for _ in range(n):" in code.source


@pytest.mark.parametrize("order", [(1, 0), (1, 2, 0), (2, 0, 1), (0, 2, 1)])
def test_carried_permutations_use_a_parallel_assignment(check_graph, order) -> None:
    names = "abc"[:len(order)]
    params = ", ".join(f"%{v}: int" for v in names)
    carried = ", ".join(f"%{v}_1" for v in names)
    graph = parse_graph(f"""
    graph @rotate({params}, %n: int) {{
      %zero = constant(value=0) : int
      %one = constant(value=1) : int
      {carried} = for %zero, %n, %one, {", ".join(f"%{v}" for v in names)} :
          {", ".join("int" for _ in names)} {{
        body(%i: int, {", ".join(f"%{v}_2: int" for v in names)}) {{
          yield {", ".join(f"%{names[k]}_2" for k in order)}
        }}
      }}
      return {carried}
    }}""")
    calls = [(*range(10, 10 + len(names)), n) for n in range(4)]
    code = check_graph(graph, *calls)
    tree = ast.parse(code.source)
    loop = next(n for n in ast.walk(tree) if isinstance(n, ast.For))
    swaps = [s for s in loop.body if isinstance(s, ast.Assign)]
    moved = [k for k in range(len(order)) if order[k] != k]
    assert len(swaps) == 1 and len(swaps[0].targets[0].elts) == len(moved)


def test_reading_the_old_value_after_a_new_one_is_computed(check_graph) -> None:
    """`a2 = a + 1; b2 = a * 2` must not overwrite `a` before `b2` reads it."""
    graph = parse_graph("""
    graph @step(%a: int, %b: int, %n: int) {
      %zero = constant(value=0) : int
      %one = constant(value=1) : int
      %two = constant(value=2) : int
      %a_1, %b_1 = for %zero, %n, %one, %a, %b : int, int {
        body(%i: int, %a_2: int, %b_2: int) {
          %a_3 = add(%a_2, %one) : int
          %b_3 = mul(%a_2, %two) : int
          %b_4 = add(%b_3, %b_2) : int
          yield %a_3, %b_4
        }
      }
      return %a_1, %b_1
    }""")
    check_graph(graph, (1, 1, 0), (1, 1, 1), (1, 1, 4), (-3, 5, 3))


def test_nested_regions(check_graph) -> None:
    graph = parse_graph("""
    graph @nest(%x: f32[4], %n: int) {
      %zero = constant(value=0) : int
      %one = constant(value=1) : int
      %i, %x_1 = while %zero, %x : int, f32[4] {
        cond(%i_1: int, %x_2: f32[4]) { %c = lt(%i_1, %n) : bool; yield %c }
        body(%i_2: int, %x_3: f32[4]) {
          %two = constant(value=2) : int
          %r = mod(%i_2, %two) : int
          %even = eq(%r, %zero) : bool
          %x_4 = if %even : f32[4] {
            then {
              %three = constant(value=3) : int
              %x_5 = for %zero, %three, %one, %x_3 : f32[4] {
                body(%j: int, %x_6: f32[4]) {
                  %h = constant(value=0.5) : float
                  %x_7 = mul(%x_6, %h) : f32[4]
                  %x_8 = add(%x_7, %j) : f32[4]
                  yield %x_8
                }
              }
              yield %x_5
            }
            else { %x_9 = neg(%x_3) : f32[4]; yield %x_9 }
          }
          %i_3 = add(%i_2, %one) : int
          yield %i_3, %x_4
        }
      }
      return %x_1, %i
    }""")
    x = np.linspace(-1, 1, 4).astype(np.float32)
    code = check_graph(graph, (x, 0), (x, 1), (x, 4))
    body = function_text(code.source)
    # every version of x lives in the one variable `x`: no copies anywhere
    assert body.count("x = ") == 2 and "x_" not in body
    assert "x = x * F32_0_5 + j" in body  # NOTE: a typed 0-d constant in a loop


def test_an_if_chain_is_written_with_elif(check_graph) -> None:
    """An else branch that is just another `if` reads `elif`: 120 of them stay one level deep
    (Python allows 100 levels of indentation)."""
    g = Graph("chain")
    x = g.body.add_param(Scalar(int), "x")

    def chain(block: Block, i: int) -> Value:
        b = Builder(InsertPoint.at_end(block))
        if i == 120:
            return x
        then, else_ = Block(), Block()
        then.set_results([Builder(InsertPoint.at_end(then)).constant(i)])
        else_.set_results([chain(else_, i + 1)])
        return b.if_(b.op("eq", x, b.constant(i)), then, else_, names=["y"])[0]

    g.body.set_results([chain(g.body, 0)])
    code = check_graph(g, (0,), (57,), (119,), (500,))
    body = function_text(code.source)
    assert "    if x == 0:\n        y = 0\n    elif x == 1:\n        y = 1\n" in body
    assert max(len(line) - len(line.lstrip()) for line in body.splitlines()) == 8
