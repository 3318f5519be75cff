"""Static-shape spellings of the window ops' gradient ops (conv2d_grad_input and
conv2d_grad_weight as im2col + GEMM in batches of images, max_pool2d_grad over non-overlapping
blocks) compute exactly what the generic kernels compute, for every geometry."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from amber.codegen import generate
from amber.graph import Builder, Graph, InsertPoint
from amber.ops import nn_kernels
from amber.ops.types import type_of


def compiled(op: str, *args: np.ndarray, **attrs) -> tuple[np.ndarray, str]:
    g = Graph("one")
    values = [g.body.add_param(type_of(a), f"a{i}") for i, a in enumerate(args)]
    g.body.set_results([Builder(InsertPoint.at_end(g.body)).op(op, *values, **attrs)])
    code = generate(g)
    namespace: dict = {}
    exec(code.source, namespace)  # noqa: S102
    return namespace[code.function_name](*args), code.source


@st.composite
def conv_problems(draw):
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    stride = (draw(st.integers(1, 2)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    pads = tuple(draw(st.integers(0, 2)) for _ in range(4)) if draw(st.booleans()) else (0,) * 4
    n, c, o = draw(st.integers(1, 6)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    h = draw(st.integers((kh - 1) * dilation[0] + 1, 9))
    w = draw(st.integers((kw - 1) * dilation[1] + 1, 9))
    oh = (h + pads[0] + pads[1] - (kh - 1) * dilation[0] - 1) // stride[0] + 1
    ow = (w + pads[2] + pads[3] - (kw - 1) * dilation[1] - 1) // stride[1] + 1
    rng = np.random.default_rng(draw(st.integers(0, 1000)))
    x = rng.standard_normal((n, c, h, w), dtype=np.float32)
    weight = rng.standard_normal((o, c, kh, kw), dtype=np.float32)
    g = rng.standard_normal((n, o, oh, ow), dtype=np.float32)
    attrs = {"stride": stride, "dilation": dilation, "groups": 1,
             "pad_mode": "pad" if any(pads) else "valid", "padding": pads}
    return x, weight, g, attrs


@settings(max_examples=40, deadline=None)
@given(conv_problems())
def test_conv2d_gradient_spellings_match_the_kernels(problem):
    x, weight, g, attrs = problem
    want = nn_kernels.conv2d_grad_input(g, weight, x_shape=x.shape, **attrs)
    got, source = compiled("conv2d_grad_input", g, weight, x_shape=x.shape, **attrs)
    assert "conv2d_input_gemm(" in source
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    want = nn_kernels.conv2d_grad_weight(x, g, w_shape=weight.shape, **attrs)
    got, source = compiled("conv2d_grad_weight", x, g, w_shape=weight.shape, **attrs)
    assert "conv2d_weight_gemm(" in source
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(2, 9), st.integers(2, 9),
       st.integers(0, 1000), st.booleans())
def test_max_pool_gradient_over_blocks_matches_the_kernel(kh, kw, h, w, seed, ties):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 3, max(h, kh), max(w, kw)), dtype=np.float32)
    if ties:  # NOTE: equal maxima: the first one (row-major in its window) takes the adjoint
        x = np.round(x)
    out = nn_kernels.max_pool_blocks(x, (kh, kw))
    g = rng.standard_normal(out.shape, dtype=np.float32)
    attrs = {"kernel_size": (kh, kw), "stride": (kh, kw)}
    want = nn_kernels.max_pool2d_grad(x, out, g, **attrs)
    got, source = compiled("max_pool2d_grad", x, out, g, **attrs)
    assert "max_pool_blocks_grad(" in source
    np.testing.assert_array_equal(got, want)
