"""The verifier: valid graphs pass; each broken invariant gets a report naming it, marked in the
printed IR, and a malformed graph never crashes the verifier."""
from __future__ import annotations

import pytest

from amber.graph import (Graph, IRVerifyError, Node, Use, Value, parse_graph, print_graph,
                         verify)
from amber.graph.types import Scalar
from amber.ops import lookup

LOOP = """
graph @loop(%n: int, %x: f32[3]) {
  %zero = constant(value=0) : int
  %i, %acc = while %zero, %x : int, f32[3] {
    cond(%i0: int, %a0: f32[3]) {
      %go = lt(%i0, %n) : bool
      yield %go
    }
    body(%i1: int, %a1: f32[3]) {
      %p = print(%a1) : none
      %c = gt(%i1, %zero) : bool
      %a2 = if %c : f32[3] {
        then {
          %t = add(%a1, %i1) : f32[3]
          yield %t
        }
        else {
          yield %a1
        }
      }
      %one = constant(value=1) : int
      %i2 = add(%i1, %one) : int
      yield %i2, %a2
    }
  }
  %q = print(%i) : none
  %r = print(%acc) after %q : none
  return %acc
}
"""


def problems(graph: Graph) -> str:
    with pytest.raises(IRVerifyError) as info:
        verify(graph)
    return str(info.value)


def loop() -> tuple[Graph, dict[str, Node]]:
    graph = parse_graph(LOOP)
    verify(graph)
    named = {v.name: node for node in graph.walk() for v in node.outputs}
    return graph, named


def test_samples_and_texts_verify(samples) -> None:
    for build, _ in samples.all.values():
        verify(build())
    loop()


def test_report_lists_every_problem_and_marks_lines() -> None:
    graph, n = loop()
    n["q"].set_input(0, n["acc"].outputs[1])   # fine: acc is visible
    n["c"].attrs["bogus"] = 1
    del n["r"].attrs["sep"]
    text = problems(graph)
    assert "2 problem(s)" in text
    assert "%c = gt: gt: attributes must be exactly []" in text
    assert "missing ['sep']" in text
    lines = text.splitlines()
    marked = [i for i, line in enumerate(lines) if line.lstrip().startswith("^^^")]
    assert [lines[i - 1].strip().split(" ")[0] for i in marked] == ["%c", "%r"]


# -- ownership and definitions --------------------------------------------------------------
def test_output_owner_index_mismatch() -> None:
    graph, n = loop()
    n["go"].outputs[0].index = 3
    assert "result #0 has owner/index that do not point back here" in problems(graph)


def test_param_owner_mismatch() -> None:
    graph, _ = loop()
    graph.inputs[1].owner = None
    assert "parameter #1 has owner/index" in problems(graph)


def test_value_defined_twice() -> None:
    graph, n = loop()
    n["one"].outputs[0] = n["zero"].output
    assert "defines a value already defined elsewhere" in problems(graph)


# -- dominance ------------------------------------------------------------------------------
def test_use_before_definition() -> None:
    graph, n = loop()
    body = graph.body.nodes
    body[0], body[1] = body[1], body[0]   # the while now precedes %zero
    assert "%zero is used before its definition" in problems(graph)


def test_use_from_sibling_block() -> None:
    graph, n = loop()
    region = n["a2"]
    region.else_.set_results([n["t"].output])
    assert "yields #0 %t is defined in a block that does not enclose this use" in problems(graph)


def test_use_of_inner_value_outside() -> None:
    graph, n = loop()
    n["q"].set_input(0, n["i2"].output)
    assert "%i2 is defined in a block that does not enclose this use" in problems(graph)


def test_use_of_foreign_value() -> None:
    graph, n = loop()
    n["q"].set_input(0, Value(Scalar(int), "stray"))
    assert "input #0 %stray is not defined anywhere in this graph" in problems(graph)


# -- use lists and links --------------------------------------------------------------------
def test_missing_use() -> None:
    graph, n = loop()
    n["zero"].output.uses.clear()
    assert "input #0: the value lists this use 0 times, not once" in problems(graph)


def test_stale_use_of_removed_node() -> None:
    graph, n = loop()
    graph.body.remove(n["r"])   # detached without dropping its uses
    assert "%acc lists a use by <Node %r = print(%acc)>, which is not in the graph" \
        in problems(graph)


def test_bogus_use_index() -> None:
    graph, n = loop()
    n["zero"].output.uses.append(Use(n["go"], 0))
    assert "%zero lists a use as operand #0 of" in problems(graph)


def test_node_parent_link() -> None:
    graph, n = loop()
    n["p"].parent = graph.body
    assert "%p = print: node.parent does not point at the block" in problems(graph)


def test_block_parent_link() -> None:
    graph, n = loop()
    n["a2"].else_.parent = None
    assert "a nested block's parent does not point at this node" in problems(graph)


def test_graph_body_link() -> None:
    graph, _ = loop()
    graph.body.parent = None
    assert "graph.body.parent does not point at the graph" in problems(graph)


# -- op contract ----------------------------------------------------------------------------
def test_op_arity() -> None:
    graph, n = loop()
    n["i2"].inputs = [n["i2"].inputs[0]]
    assert "add takes 2 input(s) ('x', 'y'), got 1" in problems(graph)


def test_variadic_arity() -> None:
    graph, n = loop()
    n["r"].inputs = []   # print(*xs) takes any number
    verify(graph)
    getitem = Node(lookup("getitem"), [], {"index": 0}, [Scalar(int)], ["g"])
    graph.body.insert(0, getitem)
    assert "getitem takes at least 1 input(s)" in problems(graph)


def test_unknown_attribute() -> None:
    graph, n = loop()
    n["p"].attrs["color"] = "red"
    assert "print: attributes must be exactly ['end', 'sep'] (missing [], unknown ['color'])" \
        in problems(graph)


def test_op_with_two_results() -> None:
    graph = Graph("g")
    graph.body.append(Node(lookup("make_tuple"), [], {}, [Scalar(int), Scalar(int)]))
    assert "an op node has exactly one result, not 2" in problems(graph)


def test_codegen_hints_are_allowed_but_inplace_must_name_an_input() -> None:
    text = """
        graph @f(%x: f32[4]) {
          %a = exp(%x) : f32[4]
          %b = neg(%a) : f32[4]
          return %b
        }
    """
    graph = parse_graph(text)
    node = graph.body.nodes[1]
    node.attrs["__inplace__"] = 0
    verify(graph)  # a hint, not an unknown attribute
    printed = print_graph(graph)
    assert "neg(%a, __inplace__=0)" in printed and print_graph(parse_graph(printed)) == printed
    node.attrs["__inplace__"] = 1
    with pytest.raises(IRVerifyError, match="__inplace__ must name one of its inputs, got 1"):
        verify(graph)
