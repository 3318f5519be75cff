"""The test helpers other IR tests lean on: `filecheck` and `check_pass` (from conftest)."""
from __future__ import annotations

import pytest

from amber.graph import Graph, Rewriter, print_block, print_node

TEXT = """\
graph @g(%x: f32[3]) {
  %a = relu(%x) : f32[3]
  %b = neg(%a) : f32[3]
  %c = print(%b) : none
  return %b
}
"""


def test_filecheck_matches_in_order(filecheck) -> None:
    filecheck(TEXT, """
        CHECK: graph @g
        CHECK-NEXT: relu(%x)
        CHECK-NOT: print
        CHECK: neg(%a)
        CHECK: return %b
        CHECK-NOT: relu
    """)


@pytest.mark.parametrize("checks, message", [
    ("CHECK: neg\nCHECK: relu", "CHECK: 'relu' not found after line 3"),
    ("CHECK: relu\nCHECK-NEXT: print", "CHECK-NEXT: 'print' not found after line 2"),
    ("CHECK: graph\nCHECK-NOT: neg\nCHECK: print", "CHECK-NOT: 'neg' found in line"),
    ("CHECK: neg\nCHECK-NOT: print", "CHECK-NOT: 'print' found"),
    ("CHECK-SAME: x", "unknown directive"),
])
def test_filecheck_failures(filecheck, checks: str, message: str) -> None:
    with pytest.raises((AssertionError, ValueError), match=message):
        filecheck(TEXT, checks)


def drop_unused_relu(graph: Graph, rw: Rewriter) -> bool:
    """A toy pass: erase relu nodes nobody reads."""
    for node in list(graph.walk()):
        if node.name == "relu" and not node.output.uses:
            rw.erase(node)
    return rw.changed


def test_check_pass_with_a_function(check_pass) -> None:
    graph = check_pass(drop_unused_relu, """
        graph @g(%x: f32[3]) {
          %a = relu(%x) : f32[3]
          %b = neg(%x) : f32[3]
          return %b
        }
        """, """
        graph @g(%x: f32[3]) {
          %b = neg(%x) : f32[3]
          return %b
        }
        """)
    assert [n.name for n in graph.walk()] == ["neg"]


def test_check_pass_reports_a_mismatch(check_pass) -> None:
    text = "graph @g(%x: int) {\n  %a = relu(%x) : int\n  return %x\n}\n"
    with pytest.raises(AssertionError, match="gave:"):
        check_pass(drop_unused_relu, text, text)


def test_check_pass_catches_an_unreported_change(check_pass) -> None:
    def sneaky(graph: Graph, rw: Rewriter) -> bool:
        drop_unused_relu(graph, rw)
        return False
    text = "graph @g(%x: int) {\n  %a = relu(%x) : int\n  return %x\n}\n"
    with pytest.raises(AssertionError, match="changed the IR but returned False"):
        check_pass(sneaky, text, "graph @g(%x: int) {\n  return %x\n}\n")


def test_check_pass_by_registry_name(check_pass) -> None:
    check_pass("dce", """
        graph @g(%x: f32[3]) {
          %a = relu(%x) : f32[3]
          %p = print(%x) : none
          return %x
        }
        """, """
        graph @g(%x: f32[3]) {
          %p = print(%x) : none
          return %x
        }
        """)


def test_print_block_and_node(samples) -> None:
    graph = samples.if_in_while()
    loop = graph.body.nodes[-1]
    assert print_block(loop.cond) == "%go = lt(%i, %n) : bool\nyield %go\n"
    text = print_node(loop)
    assert text.startswith("%i, %acc = while %i_1, %acc_1 : int, f32[3] {\n  cond(")
