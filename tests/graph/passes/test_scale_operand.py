"""Scaling the smaller matmul operand: IR text in, IR text out, and the same numbers."""
from __future__ import annotations

import numpy as np

from amber.graph import parse_graph, run_graph
from amber.graph.passes import PASSES
from amber.graph.rewriter import Rewriter


def test_lr_times_weight_gradient_scales_the_batch(check_pass):
    check_pass("scale_operand", """
        graph @f(%lr: f32[], %dy: f32[8,3], %x: f32[8,20]) {
          %g = matmul(%dy, %x, transpose_a=True) : f32[3,20]
          %s = mul(%lr, %g) : f32[3,20]
          return %s
        }
    """, """
        graph @f(%lr: f32[], %dy: f32[8,3], %x: f32[8,20]) {
          %dy_1 = mul(%lr, %dy) : f32[8,3]
          %s = matmul(%dy_1, %x, transpose_a=True) : f32[3,20]
          return %s
        }
    """)


def test_scalar_on_the_right_and_a_python_number(check_pass):
    check_pass("scale_operand", """
        graph @f(%a: f32[30,2], %b: f32[2,30]) {
          %c = constant(value=0.5) : float
          %g = matmul(%a, %b) : f32[30,30]
          %s = mul(%g, %c) : f32[30,30]
          return %s
        }
    """, """
        graph @f(%a: f32[30,2], %b: f32[2,30]) {
          %c = constant(value=0.5) : float
          %a_1 = mul(%c, %a) : f32[30,2]
          %s = matmul(%a_1, %b) : f32[30,30]
          return %s
        }
    """)


UNCHANGED = {
    "product used twice": """
        graph @f(%lr: f32[], %a: f32[8,3], %b: f32[3,20]) {
          %g = matmul(%a, %b) : f32[8,20]
          %s = mul(%lr, %g) : f32[8,20]
          %t = make_tuple(%s, %g) : (f32[8,20], f32[8,20])
          return %t
        }""",
    "operands not smaller": """
        graph @f(%lr: f32[], %a: f32[20,20], %b: f32[20,20]) {
          %g = matmul(%a, %b) : f32[20,20]
          %s = mul(%lr, %g) : f32[20,20]
          return %s
        }""",
    "scale changes the dtype": """
        graph @f(%lr: f64[], %a: f32[8,1], %b: f32[1,20]) {
          %g = matmul(%a, %b) : f32[8,20]
          %s = mul(%lr, %g) : f64[8,20]
          return %s
        }""",
    "scalar made after the product": """
        graph @f(%lr: f32[], %a: f32[8,1], %b: f32[1,20]) {
          %g = matmul(%a, %b) : f32[8,20]
          %k = mul(%lr, %lr) : f32[]
          %s = mul(%k, %g) : f32[8,20]
          return %s
        }""",
    "not a scalar": """
        graph @f(%v: f32[20], %a: f32[8,1], %b: f32[1,20]) {
          %g = matmul(%a, %b) : f32[8,20]
          %s = mul(%v, %g) : f32[8,20]
          return %s
        }""",
}


def test_left_alone_where_it_does_not_apply():
    for why, text in UNCHANGED.items():
        graph = parse_graph(text)
        assert not PASSES["scale_operand"](graph, Rewriter()), why


def test_results_agree_to_float_precision():
    graph = parse_graph("""
        graph @f(%lr: f32[], %dy: f32[64,16], %x: f32[64,300]) {
          %g = matmul(%dy, %x, transpose_a=True) : f32[16,300]
          %s = mul(%lr, %g) : f32[16,300]
          return %s
        }""")
    rng = np.random.default_rng(0)
    args = (np.float32(0.01), rng.standard_normal((64, 16), dtype=np.float32),
            rng.standard_normal((64, 300), dtype=np.float32))
    before = run_graph(graph, *args)
    assert PASSES["scale_operand"](graph, Rewriter())
    np.testing.assert_allclose(run_graph(graph, *args), before, rtol=1e-5, atol=1e-7)
