"""Effects: print, assert and raise are expression statements, run in program order, and
print exactly what the interpreter prints."""
from __future__ import annotations

import pytest

from amber.graph import parse_graph, run_graph

EFFECTS = """
graph @talk(%n: int, %limit: int) {
  %zero = constant(value=0) : int
  %one = constant(value=1) : int
  %start = constant(value='start') : str
  %p0 = print(%start, %n, sep='|') : none
  %s = for %zero, %n, %one, %zero : int {
    body(%i: int, %s_1: int) {
      %two = constant(value=2) : int
      %r = mod(%i, %two) : int
      %odd = eq(%r, %one) : bool
      %s_2 = if %odd : int {
        then { %odd_text = constant(value='odd') : str; %p1 = print(%odd_text, %i, end=';') : none
               %s_3 = add(%s_1, %i) : int; yield %s_3 }
        else { %p2 = print(%i) : none; yield %s_1 }
      }
      %small = lt(%s_2, %limit) : bool
      %msg = constant(value='sum too large') : str
      %a = assert(%small, %msg) : none
      yield %s_2
    }
  }
  %done = constant(value='done') : str
  %p3 = print(%done, %s) : none
  return %s
}"""


def test_prints_run_in_program_order(check_graph, load_code, capsys) -> None:
    graph = parse_graph(EFFECTS)
    code = check_graph(graph, (5, 100))
    capsys.readouterr()
    load_code(code)(5, 100)
    generated = capsys.readouterr().out
    run_graph(graph, 5, 100)
    assert generated == capsys.readouterr().out == "start|5\n0\nodd 1;2\nodd 3;4\ndone 4\n"
    assert "    print('start', n, sep='|'" in code.source


def test_assert_raises_at_the_same_point(check_graph, load_code, capsys) -> None:
    graph = parse_graph(EFFECTS)
    code = check_graph(graph, (6, 3))
    capsys.readouterr()
    with pytest.raises(AssertionError, match="sum too large"):
        load_code(code)(6, 3)
    assert capsys.readouterr().out == "start|6\n0\nodd 1;2\nodd 3;"


def test_raise_op(check_graph) -> None:
    graph = parse_graph("""
    graph @refuse(%x: int) {
      %zero = constant(value=0) : int
      %bad = lt(%x, %zero) : bool
      %y = if %bad : int {
        then { %text = constant(value='negative') : str
               %r = raise(%text, %x, exc_type=ValueError) : none; yield %x }
        else { yield %x }
      }
      return %y
    }""")
    code = check_graph(graph, (3,), (-3,))
    assert "raise_error(ValueError, 'negative', x)" in code.source
