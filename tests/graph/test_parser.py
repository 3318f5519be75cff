"""The parser on hand-written texts (compact forms print canonically) and on bad texts, which
get IRParseError with line:col and a caret under the offending token."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amber.graph import IRParseError, Loc, parse_graph, print_graph, run_graph, verify
from amber.graph.types import Scalar, Tensor


def canon(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


COMPACT = """
# a leading comment is ignored
graph @net(%x: f32[?,4], %c: bool) {
  %y = if %c : f32[?,4] { then { %r = relu(%x) : f32[?,4]; yield %r } else { yield %x } }  # a:1
  return %y
}"""


def test_compact_form_prints_canonically() -> None:
    graph = parse_graph(COMPACT)
    verify(graph)
    assert graph.body.nodes[0].loc == Loc("a", 1)
    assert print_graph(graph) == canon("""
        graph @net(%x: f32[?,4], %c: bool) {
          %y = if %c : f32[?,4] {                       # a:1
            then {
              %r = relu(%x) : f32[?,4]
              yield %r
            }
            else {
              yield %x
            }
          }
          return %y
        }
        """)


def test_types_come_from_the_text_not_inference() -> None:
    graph = parse_graph("graph @g(%x: f32[2]) { %y = relu(%x) : f32[?]; return %y }")
    assert graph.outputs[0].type == Tensor(("?",), np.float32)


def test_missing_attributes_take_defaults() -> None:
    graph = parse_graph("graph @g(%x: int) { %p = print(%x, end='') : none; return %p }")
    assert graph.body.nodes[0].attrs == {"sep": " ", "end": ""}
    assert "print(%x, end='')" in print_graph(graph)


def test_names_are_scoped_by_block() -> None:
    graph = parse_graph("""
        graph @g(%c: bool, %x: int) {
          %y = if %c : int {
            then { %t = neg(%x) : int; yield %t }
            else { %t = abs(%x) : int; yield %t }
          }
          return %y
        }""")
    verify(graph)
    assert "%t_1 = abs(%x) : int" in print_graph(graph)
    assert run_graph(graph, False, -3) == 3 and run_graph(graph, True, 5) == -5


def test_labels_name_nodes_without_results() -> None:
    text = canon("""
        graph @g(%c: bool, %x: int) {
          ^if = if %c {
            then {
              %0 = print(%x) : none
              yield
            }
            else {
              yield
            }
          }
          %1 = print(%x) after ^if : none
          return
        }
        """)
    graph = parse_graph(text)
    verify(graph)
    assert graph.body.nodes[1].control_inputs == [graph.body.nodes[0]]
    assert print_graph(graph) == text


def test_graph_name_may_be_quoted_and_params_empty() -> None:
    graph = parse_graph("graph @'my net'() { %0 = constant(value=1) : int; return %0 }")
    assert graph.name == "my net" and graph.inputs == []
    assert print_graph(graph).startswith("graph @'my net'() {")


def test_multiple_results_and_region_attrs() -> None:
    graph = parse_graph("""
        graph @g(%n: int) {
          %a, %b = for %n, %n, %n, %n, %n [unroll=2] : int, int {
            body(%i: int, %p: int, %q: int) { yield %q, %p }
          }
          return %a, %b
        }""")
    node = graph.body.nodes[0]
    assert node.attrs == {"unroll": 2} and [v.type for v in node.outputs] == [Scalar(int)] * 2
    assert "for %n, %n, %n, %n, %n [unroll=2] : int, int {" in print_graph(graph)


ERRORS = [
    ("graph @g() {\n  %y = nosuchop() : int\n  return %y\n}", 2, 8, "unknown op 'nosuchop'"),
    ("graph @g() {\n  %y = neg(%x) : int\n  return %y\n}", 2, 12, "%x is not defined here"),
    ("graph @g(%x: int) {\n  %x = neg(%x) : int\n  return %x\n}", 2, 3, "%x is already defined"),
    ("graph @g(%x: f33[2]) {\n  return %x\n}", 1, 14, "unknown dtype 'f33'"),
    ("graph @g(%x: int) {\n  %y = neg(%x)\n  return %y\n}", 2, 8,
     "1 result name(s) but 0 type(s)"),
    ("graph @g(%x: int) {\n  %y = neg(%x) : int\n}", 3, 1, "expected a statement or 'return'"),
    ("graph @g(%x: int) {\n  %y = neg(%x) : int ?\n  return %y\n}", 2, 22,
     "expected an op name, found '?'"),
    ("graph @g(%x: int) {\n  %y = neg(%x) : int !\n  return %y\n}", 2, 22,
     "unexpected character '!'"),
    ("graph @g() {\n  %c = constant(value=(1)) : (int,)\n  return %c\n}", 2, 23,
     "a 1-tuple is written (x,)"),
    ("graph @g() {\n  %c = constant(value=array<f32[3]>[1.0]) : f32[3]\n  return %c\n}", 2, 23,
     "array<f32[3]> needs 3 items, got 1"),
    ("graph @g(%x: int) {\n  %p = print(%x, color=1) : none\n  return %p\n}", 2, 8,
     "print: unknown attribute(s) color"),
    ("graph @g(%x: int) {\n  %p = print(%x) after %x : none\n  return %p\n}", 2, 24,
     "%x is a block parameter, not a node's result"),
    ("graph @g(%c: bool) {\n  if %c {\n    else {\n      yield\n    }\n  }\n  return\n}", 3, 5,
     "if: expected a 'then' block, found 'else'"),
    ("graph @g(%x: int) {\n  %p = print(sep='', %x) : none\n  return %p\n}", 2, 22,
     "expected an input (%name) or an attribute (name=value)"),
    ("graph @g(%x: int) {\n  return %x\n", 3, 1, "expected '}', found end of input"),
]


@pytest.mark.parametrize("text, line, col, message", ERRORS, ids=[e[3][:30] for e in ERRORS])
def test_parse_errors(text: str, line: int, col: int, message: str) -> None:
    with pytest.raises(IRParseError) as info:
        parse_graph(text)
    error = info.value
    assert (error.line, error.col) == (line, col), str(error)
    first, source, caret = str(error).splitlines()
    assert first == f"{line}:{col}: {message}"
    assert source == "  " + text.splitlines()[line - 1] if line <= len(text.splitlines()) else True
    assert caret == "  " + " " * (col - 1) + "^"


PIECES = ["%x", "(", ")", "{", "}", ",", ":", "=", "f32[", "]", "yield", "after", "^if", "while",
          "[", "$0", "'s", "-", "...", "array<", ">", "meta", ";", "#", "\n", "1e", "slice(", ""]


@settings(max_examples=50, deadline=None)
@given(st.sampled_from(["straight_line", "if_in_while", "for_carried", "effects"]),
       st.floats(0, 1), st.integers(0, 12), st.sampled_from(PIECES))
def test_damaged_texts_fail_cleanly(samples, name: str, where: float, cut: int,
                                    piece: str) -> None:
    text = print_graph(samples.all[name][0]())
    i = int(where * len(text))
    damaged = text[:i] + piece + text[i + cut:]
    try:
        graph = parse_graph(damaged)
    except IRParseError:
        return
    printed = print_graph(graph)   # whatever parses prints, and round-trips
    assert print_graph(parse_graph(printed)) == printed
