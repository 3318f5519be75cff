"""Orient products: IR text in, IR text out; the turned product's numbers, generated code and
kept buffers; a train step whose layers all turn equals eager."""
from __future__ import annotations

import numpy as np
import pytest

import amber
from amber import nn
from amber.codegen import generate
from amber.graph import parse_graph, run_graph
from amber.graph.passes import PASSES, optimize
from amber.graph.rewriter import Rewriter
from amber.ops.nn import matmul

LAYERS = """
    graph @f(%x: f32[64,784], %w1: f32[256,784], %w2: f32[128,256]) {
      %h = dense(%x, %w1) : f32[64,256]
      %r = relu(%h) : f32[64,256]
      %t = transpose(%w2) : f32[256,128]
      %y = matmul(%r, %t) : f32[64,128]
      %s = sum(%y, axis=0) : f32[128]
      return %s
    }"""


def test_wide_products_turn_and_a_transposed_operand_folds_into_its_flag(check_pass):
    check_pass("orient_products", LAYERS, """
        graph @f(%x: f32[64,784], %w1: f32[256,784], %w2: f32[128,256]) {
          %h = matmul(%x, %w1, transpose_b=True, turned=True) : f32[64,256]
          %r = relu(%h) : f32[64,256]
          %y = matmul(%r, %w2, transpose_b=True, turned=True) : f32[64,128]
          %s = sum(%y, axis=0) : f32[128]
          return %s
        }
    """)


UNCHANGED = {
    "a tall result (BLAS is as fast either way)": """
        graph @f(%x: f32[512,256], %w: f32[256,256]) {
          %y = matmul(%x, %w) : f32[512,256]
          %s = sum(%y, axis=0) : f32[256]
          return %s
        }""",
    "a returned product (the caller's arrays stay C-ordered)": """
        graph @f(%x: f32[64,256], %w: f32[256,512]) {
          %y = matmul(%x, %w) : f32[64,512]
          return %y
        }""",
    "a symbolic batch": """
        graph @f(%x: f32[N,256], %w: f32[256,512]) {
          %y = matmul(%x, %w) : f32[N,512]
          %s = sum(%y, axis=0) : f32[512]
          return %s
        }""",
    "a small product": """
        graph @f(%x: f32[4,16], %w: f32[16,32]) {
          %y = matmul(%x, %w) : f32[4,32]
          %s = sum(%y, axis=0) : f32[32]
          return %s
        }""",
    "integers": """
        graph @f(%x: i64[64,256], %w: i64[256,512]) {
          %y = matmul(%x, %w) : i64[64,512]
          %s = sum(%y, axis=0) : i64[512]
          return %s
        }""",
    "a batch of products": """
        graph @f(%x: f32[8,64,256], %w: f32[256,512]) {
          %y = matmul(%x, %w) : f32[8,64,512]
          %s = sum(%y, axis=0) : f32[64,512]
          return %s
        }""",
    "a biased dense (fuse splits it first)": """
        graph @f(%x: f32[64,256], %w: f32[512,256], %b: f32[512]) {
          %y = dense(%x, %w, %b, has_bias=True) : f32[64,512]
          %s = sum(%y, axis=0) : f32[512]
          return %s
        }""",
    "a product in a loop body (batching and Numba kernels read it as it is)": """
        graph @f(%x: f32[64,256], %w: f32[256,512], %n: int) {
          %0 = constant(value=0) : int
          %1 = constant(value=1) : int
          %r = for %0, %n, %1, %x : f32[64,256] {
            body(%i: int, %h: f32[64,256]) {
              %y = matmul(%h, %w) : f32[64,512]
              %z = sum(%y, axis=1, keepdims=True) : f32[64,1]
              %u = add(%h, %z) : f32[64,256]
              yield %u
            }
          }
          return %r
        }""",
}


@pytest.mark.parametrize("why", UNCHANGED)
def test_left_alone_where_it_does_not_apply(why: str) -> None:
    graph = parse_graph(UNCHANGED[why])
    assert not PASSES["orient_products"](graph, Rewriter()), why


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_turned_product_is_the_product(ta: bool, tb: bool, dtype: type) -> None:
    """The kernel, the emitted expression and the form writing into a kept buffer."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((37, 19) if ta else (19, 37)).astype(dtype)
    b = rng.standard_normal((53, 37) if tb else (37, 53)).astype(dtype)
    want = (a.T if ta else a) @ (b.T if tb else b)
    attrs = {"transpose_a": ta, "transpose_b": tb, "turned": True}
    got = matmul.kernel(a, b, **attrs)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    emitted = eval(matmul.template(attrs), {"np": np, "x": a, "y": b})  # noqa: S307
    np.testing.assert_allclose(emitted, want, rtol=1e-5)
    out = np.empty(want.shape, dtype, order=matmul.buffer_order(attrs))
    into = eval(matmul.into_template(attrs), {"np": np, "x": a, "y": b, "out": out})  # noqa: S307
    assert into.base is out and out.flags.f_contiguous  # NOTE: written in place, no copy
    np.testing.assert_allclose(out, want, rtol=1e-5)


def test_turned_layers_compute_the_graph_s_numbers():
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(s, dtype=np.float32) for s in ((64, 784), (256, 784), (128, 256))]
    want = run_graph(parse_graph(LAYERS), *args)
    graph = parse_graph(LAYERS)
    assert PASSES["orient_products"](graph, Rewriter())
    np.testing.assert_allclose(run_graph(graph, *args), want, rtol=1e-5, atol=1e-4)


def test_kept_buffers_take_the_order_of_the_turned_product_they_follow():
    """The product's buffer is Fortran-ordered, and so is the ReLU mask's and the scaled
    gradient's after it: a C-ordered one would be a transposing copy per op."""
    graph = parse_graph("""
        graph @f(%x: f32[64,784], %w: f32[256,784], %g: f32[64,256], %lr: f32[]) {
          %h = dense(%x, %w) : f32[64,256]
          %z = constant(value=0.0) : f32[]
          %m = gt(%h, %z) : b1[64,256]
          %d = mul(%g, %m) : f32[64,256]
          %s = mul(%lr, %d) : f32[64,256]
          %u = matmul(%s, %x, transpose_a=True) : f32[256,784]
          return %u
        }""")
    optimize(graph)
    code = generate(graph)
    namespace: dict = {}
    exec(compile(code.source, "<generated>", "exec"), namespace)  # noqa: S102
    fn = namespace[code.function_name]
    assert "np.matmul(w, x.T, out=buffers.h.T).T" in code.source
    assert code.source.count("order='F'") >= 2, code.source
    rng = np.random.default_rng(2)
    x, w, g = (rng.standard_normal(s, dtype=np.float32) for s in ((64, 784), (256, 784),
                                                                   (64, 256)))
    lr = np.float32(0.1)
    want = (lr * (g * (x @ w.T > 0))).T @ x
    np.testing.assert_allclose(fn(x, w, g, lr), want, rtol=1e-5, atol=1e-4)


class MLP(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Dense(96, 160), nn.Dense(160, 80), nn.Dense(80, 10)
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.fc3(self.relu(self.fc2(self.relu(self.fc1(x)))))


def test_an_mlp_train_step_whose_layers_turn_equals_eager():
    """Forward and backward products turn; the losses and the updated weights over a few steps
    are eager's to float precision."""
    def step_of() -> tuple[nn.TrainOneStepCell, MLP]:
        amber.set_seed(3)
        net = MLP()
        loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True,
                                                                      reduction="mean"))
        return nn.TrainOneStepCell(loss, nn.SGD(net.trainable_params(), 0.1)), net
    (compiled, compiled_net), (eager, eager_net) = step_of(), step_of()
    compiled = amber.jit(compiled)
    rng = np.random.default_rng(4)
    for _ in range(3):
        x = rng.standard_normal((32, 96), dtype=np.float32)
        y = rng.integers(0, 10, 32).astype(np.int32)
        np.testing.assert_allclose(np.asarray(compiled(x, y)), np.asarray(eager(x, y)),
                                   rtol=1e-5)
    assert ".T, out=buffers." in compiled.code and "order='F'" in compiled.code
    for layer in ("fc1", "fc2", "fc3"):
        for name in ("weight", "bias"):
            got = np.asarray(getattr(getattr(compiled_net, layer), name))
            want = np.asarray(getattr(getattr(eager_net, layer), name))
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
