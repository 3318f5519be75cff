"""Try regions in the text IR: printing and parsing round-trip, the verifier's checks, the
interpreter's semantics (which block runs, what the finally block yields), and DCE keeping an
op that may raise inside a try block while removing it elsewhere."""
import textwrap

import pytest

from amber.graph import IRVerifyError, parse_graph, print_graph, run_graph, verify
from amber.graph.passes import PASSES
from amber.graph.rewriter import Rewriter

CATCHING = textwrap.dedent("""\
    graph @f(%x: int, %i: int) {
      %y, %z = try [catch=(ZeroDivisionError, KeyError)] : int, int {
        try {
          %t = floordiv(%x, %i) : int
          yield %t
        }
        except(%e: any) {
          %c = constant(value=-1) : int
          yield %c
        }
        finally {
          %k = constant(value=7) : int
          yield %k
        }
      }
      return %y, %z
    }
    """)


def test_roundtrip_and_verify():
    graph = parse_graph(CATCHING)
    verify(graph)
    assert print_graph(parse_graph(print_graph(graph))) == print_graph(graph)
    assert "except(%e: any) {" in print_graph(graph)


@pytest.mark.parametrize("i, want", [(2, 4), (0, -1)])
def test_interpreter_runs_the_handler_only_when_caught(i, want):
    assert run_graph(parse_graph(CATCHING), 9, i) == (want, 7)


def test_verifier_refuses_a_handler_yielding_the_wrong_count():
    text = CATCHING.replace("yield %c\n", "yield %c, %c\n")
    with pytest.raises(IRVerifyError, match="except block yields"):
        verify(parse_graph(text))


def test_verifier_refuses_catching_a_non_exception():
    text = CATCHING.replace("catch=(ZeroDivisionError, KeyError)", "catch=(int,)")
    with pytest.raises(IRVerifyError, match="tuple of exception classes"):
        verify(parse_graph(text))


UNUSED_INDEX = """\
graph @f(%x: int, %i: int) {
  %r = try [catch=(ZeroDivisionError,)] : int {
    try {
      %t = floordiv(%x, %i) : int
      %one = constant(value=1) : int
      yield %one
    }
    except(%e: any) {
      %zero = constant(value=0) : int
      yield %zero
    }
  }
  %u = floordiv(%x, %i) : int
  return %r
}
"""


def test_dce_keeps_a_raising_op_only_inside_a_try_block():
    graph = parse_graph(UNUSED_INDEX)
    PASSES["dce"](graph, Rewriter())
    verify(graph)
    text = print_graph(graph)
    assert text.count("floordiv") == 1 and "%t = floordiv" in text
    assert run_graph(graph, 9, 0) == 0
