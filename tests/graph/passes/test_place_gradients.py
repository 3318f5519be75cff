"""Placing gradients in the all-reduce's flat buffer: IR text in, IR text out, the same numbers
(the mean's 1/N applied once), and graphs it must leave alone."""
from __future__ import annotations

import numpy as np

import amber
from amber import nn, ops
from amber.graph import parse_graph, print_graph, run_graph
from amber.graph.passes import PASSES
from amber.graph.rewriter import Rewriter

STEP = """
    graph @f(%dy: f32[8,30], %x: f32[8,4], %b: f32[8,30]) {
      %g = matmul(%dy, %x, transpose_a=True) : f32[30,4]
      %s = sum(%b, axis=(0,)) : f32[30]
      %t = make_tuple(%g, %s) : (f32[30,4], f32[30])
      %r = all_reduce_grads(%t, degree=4) : (f32[30,4], f32[30])
      return %r
    }"""


def test_a_weight_gradient_is_written_into_its_slot(check_pass):
    check_pass("place_gradients", STEP, """
        graph @f(%dy: f32[8,30], %x: f32[8,4], %b: f32[8,30]) {
          %g = placed_matmul(%dy, %x, transpose_a=True, scaled=1, degree=4, total=150, shape=(30, 4)) : f32[30,4]
          %s = sum(%b, axis=(0,)) : f32[30]
          %t = make_tuple(%g, %s) : (f32[30,4], f32[30])
          %r = all_reduce_grads(%t, degree=4, placed=(0,)) : (f32[30,4], f32[30])
          return %r
        }
    """)


def test_the_mean_is_applied_once():
    graph = parse_graph(STEP)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s, dtype=np.float32) for s in ((8, 30), (8, 4), (8, 30))]
    expected = run_graph(graph, *args)
    assert PASSES["place_gradients"](graph, Rewriter())
    for got, want in zip(run_graph(graph, *args), expected):
        np.testing.assert_allclose(got, want, rtol=1e-6)


UNCHANGED = {
    "product read elsewhere": """
        graph @f(%dy: f32[8,3], %x: f32[8,20]) {
          %g = matmul(%dy, %x, transpose_a=True) : f32[3,20]
          %t = make_tuple(%g) : (f32[3,20],)
          %r = all_reduce_grads(%t) : (f32[3,20],)
          %u = make_tuple(%r, %g) : ((f32[3,20],), f32[3,20])
          return %u
        }""",
    "two reductions share the buffer": """
        graph @f(%dy: f32[8,3], %x: f32[8,20]) {
          %g = matmul(%dy, %x, transpose_a=True) : f32[3,20]
          %t = make_tuple(%g) : (f32[3,20],)
          %r = all_reduce_grads(%t) : (f32[3,20],)
          %h = matmul(%dy, %x, transpose_a=True) : f32[3,20]
          %v = make_tuple(%h) : (f32[3,20],)
          %q = all_reduce_grads(%v) : (f32[3,20],)
          %u = make_tuple(%r, %q) : ((f32[3,20],), (f32[3,20],))
          return %u
        }""",
}


def test_left_alone_where_it_does_not_apply():
    for why, text in UNCHANGED.items():
        graph = parse_graph(text)
        assert not PASSES["place_gradients"](graph, Rewriter()), why


def test_two_reductions_in_one_step_keep_their_values():
    @amber.jit
    def step(a, b):  # NOTE: same sizes: a per-thread buffer of one size would serve both
        g, h = a.T @ b, b.T @ a
        return ops.all_reduce_grads((g,), degree=2)[0] - ops.all_reduce_grads((h,), degree=2)[0]
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((5, 4), dtype=np.float32) for _ in range(2))
    np.testing.assert_allclose(step(a, b), (a.T @ b - b.T @ a) / 2, rtol=1e-5, atol=1e-6)


def test_a_data_parallel_step_with_a_degree_trains_as_eagerly():
    amber.set_auto_parallel_context(parallel_mode=amber.ParallelMode.DATA_PARALLEL,
                                    gradients_mean=True, device_num=2)  # NOTE: mean over 2
    try:
        params = []
        for compiled in (True, False):
            amber.set_seed(5)
            net = nn.SequentialCell([nn.Dense(6, 16), nn.ReLU(), nn.Dense(16, 3)])
            step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()),
                                       nn.SGD(net.trainable_params(), 0.1))
            run = amber.jit(step) if compiled else step.construct
            rng = np.random.default_rng(2)
            for _ in range(5):
                run(rng.standard_normal((8, 6), dtype=np.float32),
                    rng.standard_normal((8, 3), dtype=np.float32))
            params.append([np.array(p) for p in net.trainable_params()])
            if compiled:
                assert run.code.count("out=gradient_slot(") == 2, run.code
    finally:
        amber.reset_auto_parallel_context()
    for got, want in zip(*params):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


SGD = """
    graph @f(%lr: f32[], %w: f32[30,4], %dy: f32[8,30], %x: f32[8,4]) {
      meta {'params': ['lr', 'w']}
      %g = matmul(%dy, %x, transpose_a=True) : f32[30,4]
      %t = make_tuple(%g) : (f32[30,4],)
      %r = all_reduce_grads(%t, in_place=True) : (f32[30,4],)
      %d = tuple_getitem(%r, index=0) : f32[30,4]
      %s = mul(%lr, %d) : f32[30,4]
      %u = assign_sub(%w, %s) after %r : f32[30,4]
      return %u
    }"""


def test_a_rate_alike_on_every_rank_is_applied_before_the_reduction(check_pass):
    check_pass("place_gradients", SGD, """
        graph @f(%lr: f32[], %w: f32[30,4], %dy: f32[8,30], %x: f32[8,4]) {
          meta {'params': ['lr', 'w']}
          %x_1 = mul(%lr, %x) : f32[8,4]
          %g = placed_matmul(%dy, %x_1, transpose_a=True, scaled=1, total=120, shape=(30, 4)) : f32[30,4]
          %t = make_tuple(%g) : (f32[30,4],)
          %r = all_reduce_grads(%t, in_place=True, placed=(0,)) : (f32[30,4],)
          %d = tuple_getitem(%r, index=0) : f32[30,4]
          %u = assign_sub(%w, %d) after %r : f32[30,4]
          return %u
        }
    """)


def test_a_rate_a_rank_sets_from_its_own_rows_stays_after_the_reduction():
    text = SGD.replace("%u = assign_sub(%w, %s) after %r : f32[30,4]", """%m = sum(%x) : f32[]
      %v = assign(%lr, %m) after %r : f32[]
      %u = assign_sub(%w, %s) after %v : f32[30,4]""")
    graph = parse_graph(text)
    assert PASSES["place_gradients"](graph, Rewriter())  # NOTE: still placed
    assert "%s = mul(%lr, %d)" in str(print_graph(graph))
