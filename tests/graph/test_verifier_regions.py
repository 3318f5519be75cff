"""The verifier on regions (arity and types of if/while/for), control edges, cycles, and
graphs so broken that only a guarded verifier survives them."""
from __future__ import annotations

import numpy as np
import pytest

from amber.graph import (FOR, IF, WHILE, AnyType, Block, Graph, IRVerifyError, Node, Tensor,
                         TupleType, parse_graph, verify)
from amber.graph.types import Scalar
from amber.graph.verifier import covers

IF_TEXT = """
graph @f(%c: bool, %x: f32[3]) {
  %y = if %c : f32[3] {
    then {
      %t = relu(%x) : f32[3]
      yield %t
    }
    else {
      yield %x
    }
  }
  return %y
}
"""

FOR_TEXT = """
graph @f(%n: int, %x: f32[3]) {
  %zero = constant(value=0) : int
  %one = constant(value=1) : int
  %s = for %zero, %n, %one, %x : f32[3] {
    body(%i: int, %acc: f32[3]) {
      %t = add(%acc, %i) : f32[3]
      yield %t
    }
  }
  return %s
}
"""


def problems(graph: Graph) -> str:
    with pytest.raises(IRVerifyError) as info:
        verify(graph)
    return str(info.value)


def region(text: str) -> tuple[Graph, Node]:
    graph = parse_graph(text)
    verify(graph)
    return graph, next(n for n in graph.body.nodes if n.is_region)


# -- if -------------------------------------------------------------------------------------
def test_if_needs_one_condition() -> None:
    graph, node = region(IF_TEXT)
    node.inputs = [*node.inputs, graph.inputs[1]]
    assert "number of inputs (the condition) is 2, expected 1" in problems(graph)


def test_if_condition_type() -> None:
    graph, node = region(IF_TEXT)
    graph.inputs[0].type = Tensor((2,), np.bool_)
    assert "condition %c has type b1[2], expected a scalar or a one-element tensor" \
        in problems(graph)
    graph.inputs[0].type = Tensor((1, "?"), np.bool_)   # may hold one element: accepted
    verify(graph)


def test_if_block_count_and_params() -> None:
    graph, node = region(IF_TEXT)
    node.then.add_param(Scalar(int), "k")
    assert "then block parameter count is 1, expected 0" in problems(graph)
    graph, node = region(IF_TEXT)
    node.blocks.pop()
    assert "number of blocks (then, else) is 1, expected 2" in problems(graph)


def test_if_yield_count() -> None:
    graph, node = region(IF_TEXT)
    node.else_.set_results([])
    assert "else block yields a number of values 0, expected 1" in problems(graph)


def test_if_yield_type_not_covered() -> None:
    graph, node = region(IF_TEXT)
    node.outputs[0].type = Tensor((4,), np.float32)
    assert "then yield #0: %t has type f32[3], which %y of type f32[4] does not cover" \
        in problems(graph)


def test_if_output_may_be_the_join() -> None:
    graph, node = region(IF_TEXT)
    node.outputs[0].type = Tensor(("?",), np.float32)
    verify(graph)


# -- while ----------------------------------------------------------------------------------
def test_while_arity_problems(samples) -> None:
    graph = samples.if_in_while()
    loop = graph.body.nodes[-1]
    loop.cond.add_param(Scalar(int), "extra")
    loop.body.set_results(loop.body.results[:1])
    text = problems(graph)
    assert "cond block parameter count is 3, expected 2" in text
    assert "body block yields a number of values 1, expected 2" in text


def test_while_cond_yields_one_flag(samples) -> None:
    graph = samples.if_in_while()
    cond = graph.body.nodes[-1].cond
    cond.set_results([cond.results[0], cond.params[0]])
    assert "cond block yields a number of values 2, expected 1" in problems(graph)
    cond.set_results([cond.params[1]])
    assert "cond yields %acc_2 of type f32[3], expected a scalar" in problems(graph)


def test_while_result_count(samples) -> None:
    graph = samples.if_in_while()
    loop = graph.body.nodes[-1]
    loop.outputs.pop()
    assert "number of results (one per carried value) is 1, expected 2" in problems(graph)


def test_while_carried_type(samples) -> None:
    graph = samples.if_in_while()
    loop = graph.body.nodes[-1]
    loop.body.params[1].type = Tensor((4,), np.float32)
    assert "initial value #1: %acc has type f32[3], which %acc_3 of type f32[4]" \
        in problems(graph)


# -- for ------------------------------------------------------------------------------------
def test_for_needs_bounds() -> None:
    graph, node = region(FOR_TEXT)
    node.inputs = node.inputs[:2]
    assert "needs (start, stop, step, *init), got 2 inputs" in problems(graph)


def test_for_bound_and_index_types() -> None:
    graph, node = region(FOR_TEXT)
    graph.inputs[0].type = Scalar(float)
    node.body.params[0].type = Tensor((3,), np.int64)
    text = problems(graph)
    assert "stop %n has type float, expected int" in text
    assert "index %i has type i64[3], expected int" in text


def test_for_param_and_yield_counts() -> None:
    graph, node = region(FOR_TEXT)
    node.body.add_param(Scalar(int), "j")
    assert "body parameter count (index + carried) is 3, expected 2" in problems(graph)
    graph, node = region(FOR_TEXT)
    node.body.set_results([])
    assert "body block yields a number of values 0, expected 1" in problems(graph)


def test_for_scalar_init_widens_to_tensor() -> None:
    graph = parse_graph(FOR_TEXT.replace("%x : f32[3]", "%one : f32[3]"))
    verify(graph)   # `s = 1` before `s = s + t` in the loop: the carried type is the join


def test_unbound_values_flow_anywhere() -> None:
    graph = parse_graph(IF_TEXT.replace("yield %x", "%u = undefined(name='y') : any\n yield %u"))
    verify(graph)


def test_covers() -> None:
    f3, fq = Tensor((3,), np.float32), Tensor(("?",), np.float32)
    assert covers(fq, f3) and not covers(f3, fq)
    assert covers(f3, Scalar(float)) and covers(Scalar(float), Scalar(int))
    assert not covers(Scalar(int), Scalar(float))
    assert covers(TupleType((fq, Scalar(int))), TupleType((AnyType(), Scalar(int))))
    assert not covers(TupleType((f3,)), TupleType((f3, f3)))


# -- control edges, cycles, robustness ------------------------------------------------------
EFFECTS = """
graph @f(%x: f32[3]) {
  %a = print(%x) : none
  %r = relu(%x) : f32[3]
  %b = print(%r) after %a : none
  return %r
}
"""


def test_control_input_must_come_before() -> None:
    graph = parse_graph(EFFECTS)
    a, r, b = graph.body.nodes
    a.control_inputs.append(b)
    assert "control input %b does not come before this node" in problems(graph)


def test_control_input_must_be_effectful() -> None:
    graph = parse_graph(EFFECTS)
    a, r, b = graph.body.nodes
    b.control_inputs.append(r)
    assert "%b = print: control input %r has no side effect" in problems(graph)


def test_control_input_must_share_the_block() -> None:
    graph, node = region(IF_TEXT)
    inner = node.then.nodes[0]
    graph.body.insert(0, Node(inner.op, [graph.inputs[1]], {}, [inner.outputs[0].type], ["z"]))
    inner.control_inputs.append(graph.body.nodes[0])
    assert "is not a node of the same block" in problems(graph)


def test_data_cycle() -> None:
    graph = parse_graph(EFFECTS)
    a, r, b = graph.body.nodes
    r.set_input(0, b.output)
    text = problems(graph)
    assert "dependence cycle: %r -> %b -> %r" in text


def test_region_result_used_inside_itself() -> None:
    graph, node = region(IF_TEXT)
    node.then.nodes[0].set_input(0, node.outputs[0])
    text = problems(graph)
    assert "input #0 %y is a result of a region enclosing this use (a cycle)" in text
    assert "dependence cycle: %y -> %y" in text


def test_block_nested_in_itself_does_not_hang() -> None:
    graph, node = region(IF_TEXT)
    node.then.nodes.append(node)   # the if now sits inside its own then-block
    assert "this node appears twice in the graph" in problems(graph)


def test_garbage_never_crashes() -> None:
    graph, node = region(IF_TEXT)
    graph.body.nodes.append("not a node")
    node.then.nodes[0]._inputs.append(None)
    node.attrs = None
    text = problems(graph)
    assert "block holds 'not a node', which is not a Node" in text
    assert "input #1 is None, which is not a Value" in text


def test_graph_without_body() -> None:
    graph = Graph("empty")
    graph.body = None
    assert "graph @empty: the graph has no body block" in problems(graph)


def test_unknown_region_kind() -> None:
    graph = Graph("g")
    node = Node(IF, [], {}, [], [], [Block(), Block()])
    node.op = "loop"
    graph.body.append(node)
    assert "unknown node kind 'loop'" in problems(graph)
    assert WHILE and FOR  # the region kinds are importable names
