"""The update in the GEMM: IR text in, IR text out, and NumPy's numbers bit for bit."""
from __future__ import annotations

import numpy as np
import pytest

from amber.graph import parse_graph, run_graph
from amber.graph.passes import PASSES
from amber.graph.rewriter import Rewriter

STEP = """
    graph @f(%lr: f32[], %w: f32[300,200], %dy: f32[64,300], %x: f32[64,200]) {
      %s = mul(%lr, %dy) : f32[64,300]
      %g = matmul(%s, %x, transpose_a=True) : f32[300,200]
      %u = assign_sub(%w, %g) : f32[300,200]
      return %u
    }"""


def test_sgd_s_update_of_a_product_is_one_call(check_pass):
    check_pass("update_in_gemm", STEP, """
        graph @f(%lr: f32[], %w: f32[300,200], %dy: f32[64,300], %x: f32[64,200]) {
          %s = mul(%lr, %dy) : f32[64,300]
          %u = assign_sub_product(%w, %s, %x, transpose_a=True) : f32[300,200]
          return %u
        }
    """)


def test_the_update_keeps_its_place_among_the_effects(check_pass):
    check_pass("update_in_gemm", """
        graph @f(%w: f32[300,200], %a: f32[300,64], %x: f32[64,200]) {
          %p = print(%w) : none
          %g = matmul(%a, %x) : f32[300,200]
          %u = assign_sub(%w, %g) after %p : f32[300,200]
          %q = print(%u) after %u : none
          return %u
        }
    """, """
        graph @f(%w: f32[300,200], %a: f32[300,64], %x: f32[64,200]) {
          %p = print(%w) : none
          %u = assign_sub_product(%w, %a, %x) after %p : f32[300,200]
          %q = print(%u) after %u : none
          return %u
        }
    """)


UNCHANGED = {
    "a small product (the call's fixed cost loses)": """
        graph @f(%w: f32[10,128], %a: f32[10,64], %x: f32[64,128]) {
          %g = matmul(%a, %x) : f32[10,128]
          %u = assign_sub(%w, %g) : f32[10,128]
          return %u
        }""",
    "the product used again": """
        graph @f(%w: f32[300,200], %a: f32[300,64], %x: f32[64,200]) {
          %g = matmul(%a, %x) : f32[300,200]
          %u = assign_sub(%w, %g) : f32[300,200]
          %t = make_tuple(%u, %g) : (f32[300,200], f32[300,200])
          return %t
        }""",
    "a product broadcast into the parameter": """
        graph @f(%w: f32[300,200], %a: f32[1,64], %x: f32[64,200]) {
          %g = matmul(%a, %x) : f32[1,200]
          %u = assign_sub(%w, %g) : f32[300,200]
          return %u
        }""",
    "half precision": """
        graph @f(%w: f16[300,200], %a: f16[300,64], %x: f16[64,200]) {
          %g = matmul(%a, %x) : f16[300,200]
          %u = assign_sub(%w, %g) : f16[300,200]
          return %u
        }""",
    "an operand written in place between the product and the update": """
        graph @f(%w: f32[300,200], %v: f32[64,200], %a: f32[300,64], %x: f32[64,200]) {
          %g = matmul(%a, %x) : f32[300,200]
          %z = assign_sub(%x, %v) : f32[64,200]
          %u = assign_sub(%w, %g) : f32[300,200]
          return %u
        }""",
    "an input operand, with another array written between": """
        graph @f(%w: f32[300,200], %v: f32[64,200], %a: f32[300,64], %x: f32[64,200]) {
          %g = matmul(%a, %x) : f32[300,200]
          %z = assign_sub(%v, %v) : f32[64,200]
          %u = assign_sub(%w, %g) : f32[300,200]
          return %u
        }""",
    "a view of a fresh operand written between": """
        graph @f(%w: f32[300,200], %v: f32[3], %a: f32[300,64], %x: f32[64,200]) {
          %a_1 = exp(%a) : f32[300,64]
          %x_1 = exp(%x) : f32[64,200]
          %g = matmul(%a_1, %x_1) : f32[300,200]
          %r = reshape(%a_1, shape=(19200,)) : f32[19200]
          %z = setitem(%r, %v, index=(slice(0, 3, None),)) : f32[19200]
          %u = assign_sub(%w, %g) : f32[300,200]
          return %u
        }""",
    "an update inside a loop (Numba kernels have no spelling for the call)": """
        graph @f(%w: f32[300,200], %a: f32[300,64], %x: f32[64,200], %n: int) {
          %0 = constant(value=0) : int
          %1 = constant(value=1) : int
          %r = for %0, %n, %1, %w : f32[300,200] {
            body(%i: int, %w_1: f32[300,200]) {
              %g = matmul(%a, %x) : f32[300,200]
              %u = assign_sub(%w_1, %g) : f32[300,200]
              yield %u
            }
          }
          return %r
        }""",
}


@pytest.mark.parametrize("why", UNCHANGED)
def test_left_alone_where_it_does_not_apply(why: str) -> None:
    graph = parse_graph(UNCHANGED[why])
    assert not PASSES["update_in_gemm"](graph, Rewriter()), why


def test_fresh_operands_may_see_another_array_written_between(check_pass):
    check_pass("update_in_gemm", """
        graph @f(%w: f32[300,200], %v: f32[64,200], %a: f32[300,64], %x: f32[64,200]) {
          %a_1 = exp(%a) : f32[300,64]
          %x_1 = exp(%x) : f32[64,200]
          %g = matmul(%a_1, %x_1) : f32[300,200]
          %z = assign_sub(%v, %v) : f32[64,200]
          %u = assign_sub(%w, %g) : f32[300,200]
          return %u
        }
    """, """
        graph @f(%w: f32[300,200], %v: f32[64,200], %a: f32[300,64], %x: f32[64,200]) {
          %a_1 = exp(%a) : f32[300,64]
          %x_1 = exp(%x) : f32[64,200]
          %z = assign_sub(%v, %v) : f32[64,200]
          %u = assign_sub_product(%w, %a_1, %x_1) : f32[300,200]
          return %u
        }
    """)


def test_the_same_numbers_as_the_product_and_the_subtraction():
    rng = np.random.default_rng(0)
    args = (np.float32(0.01), rng.standard_normal((300, 200), dtype=np.float32),
            rng.standard_normal((64, 300), dtype=np.float32),
            rng.standard_normal((64, 200), dtype=np.float32))
    before = run_graph(parse_graph(STEP), *[np.copy(a) for a in args])
    graph = parse_graph(STEP)
    assert PASSES["update_in_gemm"](graph, Rewriter())
    np.testing.assert_array_equal(run_graph(graph, *[np.copy(a) for a in args]), before)
