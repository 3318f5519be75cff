"""Fusing a sparse softmax cross entropy with its gradient: IR text in, IR text out, and the
same numbers as the two kernels apart."""
from __future__ import annotations

import numpy as np

from amber.graph import parse_graph, run_graph
from amber.graph.passes import PASSES
from amber.graph.rewriter import Rewriter

TRAIN_STEP = """
    graph @f(%logits: f32[4,3], %labels: i32[4]) {
      %loss = softmax_cross_entropy(%logits, %labels, sparse=True, reduction='mean') : f32[]
      %one = constant(value=1.0) : float
      %g = full_like(%loss, %one) : f32[]
      %d = softmax_cross_entropy_grad(%logits, %labels, %g, reduction='mean') : f32[4,3]
      %t = make_tuple(%loss, %d) : (f32[], f32[4,3])
      return %t
    }"""


def test_loss_and_gradient_become_one_node(check_pass):
    check_pass("fuse_loss_grad", """
        graph @f(%logits: f32[4,3], %labels: i32[4], %g: f32[]) {
          %loss = softmax_cross_entropy(%logits, %labels, sparse=True, reduction='mean') : f32[]
          %d = softmax_cross_entropy_grad(%logits, %labels, %g, reduction='mean') : f32[4,3]
          %t = make_tuple(%loss, %d) : (f32[], f32[4,3])
          return %t
        }
    """, """
        graph @f(%logits: f32[4,3], %labels: i32[4], %g: f32[]) {
          %loss_and_grad = softmax_cross_entropy_with_grad(%logits, %labels, %g, reduction='mean') : (f32[], f32[4,3])
          %loss = tuple_getitem(%loss_and_grad, index=0) : f32[]
          %d = tuple_getitem(%loss_and_grad, index=1) : f32[4,3]
          %t = make_tuple(%loss, %d) : (f32[], f32[4,3])
          return %t
        }
    """)


def test_left_alone_when_the_adjoint_comes_from_the_loss():
    graph = parse_graph(TRAIN_STEP)  # %g is made from %loss: the gradient cannot move up
    assert not PASSES["fuse_loss_grad"](graph, Rewriter())


def test_a_constant_adjoint_moves_up_and_the_numbers_are_the_same():
    graph = parse_graph(TRAIN_STEP.replace("%g = full_like(%loss, %one) : f32[]",
                                           "%g = constant(value=2.0) : float"))
    rng = np.random.default_rng(0)
    args = (rng.standard_normal((4, 3), dtype=np.float32), np.array([0, 2, 1, 2], np.int32))
    before = run_graph(graph, *args)
    assert PASSES["fuse_loss_grad"](graph, Rewriter())
    assert "softmax_cross_entropy_with_grad" in str(graph.body.nodes[1].op.name)
    after = run_graph(graph, *args)
    for a, b in zip(after, before):
        np.testing.assert_array_equal(a, b)
