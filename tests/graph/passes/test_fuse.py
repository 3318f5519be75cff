"""Fusion rewrites: IR text in, IR text out, and bit-identical results on special values."""
import textwrap

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from amber.graph import Rewriter, parse_graph, run_graph, verify
from amber.graph.passes import fuse


def test_dense(check_pass):
    check_pass("fuse", """
        graph @f(%x: f32[2,3], %w: f32[5,3], %b: f32[5]) {
          %h = dense(%x, %w, %b, has_bias=True) : f32[2,5]
          %r = relu(%h) : f32[2,5]
          return %r
        }
    """, """
        graph @f(%x: f32[2,3], %w: f32[5,3], %b: f32[5]) {
          %0 = transpose(%w) : f32[3,5]
          %h = matmul(%x, %0) : f32[2,5]
          %h_1 = add(%h, %b) : f32[2,5]
          %r = relu(%h_1) : f32[2,5]
          return %r
        }
    """)


def test_what_does_not_fuse(check_pass):
    """dense without a bias; a bias of another dtype (the add could not reuse the matmul's
    buffer); a relu someone else also reads. Pooling before relu where relu is read once."""
    check_pass("fuse", """
        graph @f(%x: f32[2,3], %w: f32[5,3], %b: f64[5], %im: f32[1,2,4,4]) {
          %h = dense(%x, %w) : f32[2,5]
          %g = dense(%x, %w, %b, has_bias=True) : f64[2,5]
          %r = relu(%im) : f32[1,2,4,4]
          %p = max_pool2d(%r, kernel_size=(2, 2), stride=(2, 2)) : f32[1,2,2,2]
          %r2 = relu(%im) : f32[1,2,4,4]
          %p2 = max_pool2d(%r2, kernel_size=(2, 2), stride=(2, 2)) : f32[1,2,2,2]
          return %h, %g, %p, %p2, %r2
        }
    """, """
        graph @f(%x: f32[2,3], %w: f32[5,3], %b: f64[5], %im: f32[1,2,4,4]) {
          %h = dense(%x, %w) : f32[2,5]
          %g = dense(%x, %w, %b, has_bias=True) : f64[2,5]
          %p = max_pool2d(%im, kernel_size=(2, 2), stride=(2, 2)) : f32[1,2,2,2]
          %p_1 = relu(%p) : f32[1,2,2,2]
          %r2 = relu(%im) : f32[1,2,4,4]
          %p2 = max_pool2d(%r2, kernel_size=(2, 2), stride=(2, 2)) : f32[1,2,2,2]
          return %h, %g, %p_1, %p2, %r2
        }
    """)


GRAPH = """
    graph @f(%x: f32[2,3], %w: f32[5,3], %b: f32[5], %im: f32[1,2,5,5]) {
      %h = dense(%x, %w, %b, has_bias=True) : f32[2,5]
      %r = relu(%im) : f32[1,2,5,5]
      %p = max_pool2d(%r, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1, 1, 1),
                      pad_mode='pad') : f32[1,2,3,3]
      return %h, %p
    }
"""
SPECIAL = st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, -3.25, 1e30, -1e30, np.inf, -np.inf, np.nan])


def f32_arrays(shape: tuple[int, ...]) -> st.SearchStrategy:
    return st.lists(SPECIAL, min_size=int(np.prod(shape)), max_size=int(np.prod(shape))).map(
        lambda items: np.array(items, np.float32).reshape(shape))


@settings(max_examples=50, deadline=None)
@given(f32_arrays((2, 3)), f32_arrays((5, 3)), f32_arrays((5,)), f32_arrays((1, 2, 5, 5)))
def test_fused_results_are_bit_identical(x, w, b, im):
    """Signed zeros, infinities and NaNs included (with padding, a window still holds a real
    element, so max and relu commute)."""
    graph = parse_graph(textwrap.dedent(GRAPH))
    with np.errstate(all="ignore"):
        want = run_graph(graph, x, w, b, im)
        assert fuse.run(graph, Rewriter())
        verify(graph)
        got = run_graph(graph, x, w, b, im)
    for a, g in zip(want, got):
        assert (a.dtype, a.shape) == (g.dtype, g.shape)
        assert a.tobytes() == g.tobytes(), f"{g} != {a}"
