"""conv2d's input gradient (ops/conv_kernels.py: at stride 1 a convolution of the adjoint with the
flipped kernels, else the scatter-add over windows) against a float64 adjoint of the textbook
convolution, and through a compiled gradient with a symbolic batch against finite differences."""
import math
import os
import sys

import numpy as np
import pytest

import amber
from amber import nn
from amber.ops.conv_kernels import conv2d_grad_input
from amber.ops.nn_kernels import window_pads

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "gradients"))
import numeric  # noqa: E402


def adjoint_loops(g, w, x_shape, stride, pads, dilation, groups):
    """The adjoint of conv2d in float64: each kernel offset's contribution added back where the
    forward read it, then the padding dropped."""
    n, c, h, wd = x_shape
    o, cg, kh, kw = w.shape
    top, bottom, left, right = pads
    oh, ow = g.shape[2:]
    out = np.zeros((n, c, h + top + bottom, wd + left + right))
    per = o // groups
    g64, w64 = g.astype(np.float64), w.astype(np.float64)
    for grp in range(groups):
        gg, ww = g64[:, grp * per:(grp + 1) * per], w64[grp * per:(grp + 1) * per]
        for i in range(kh):
            for j in range(kw):
                r, q = i * dilation[0], j * dilation[1]
                out[:, grp * cg:(grp + 1) * cg, r:r + stride[0] * oh:stride[0],
                    q:q + stride[1] * ow:stride[1]] += np.einsum("nohw,oc->nchw", gg,
                                                                 ww[:, :, i, j])
    return out[:, :, top:top + h, left:left + wd]


CASES = [  # x_shape, w_shape, stride, pad_mode, padding, dilation, groups
    ((2, 3, 8, 8), (4, 3, 3, 3), (1, 1), "same", (0, 0, 0, 0), (1, 1), 1),
    ((2, 3, 7, 5), (4, 3, 3, 3), (1, 1), "valid", (0, 0, 0, 0), (1, 1), 1),   # odd sizes
    ((1, 2, 9, 6), (3, 2, 5, 3), (1, 1), "same", (0, 0, 0, 0), (1, 1), 1),    # odd kernel
    ((2, 2, 6, 7), (3, 2, 3, 3), (1, 1), "pad", (2, 0, 1, 3), (1, 1), 1),     # asymmetric
    ((2, 2, 6, 6), (3, 2, 3, 3), (1, 1), "pad", (4, 3, 5, 1), (1, 1), 1),     # beyond reach
    ((2, 2, 9, 9), (3, 2, 3, 3), (1, 1), "same", (0, 0, 0, 0), (2, 2), 1),    # dilation
    ((2, 2, 9, 8), (3, 2, 2, 3), (1, 1), "pad", (1, 1, 0, 2), (2, 1), 1),
    ((3, 4, 5, 5), (6, 4, 1, 1), (1, 1), "valid", (0, 0, 0, 0), (1, 1), 1),   # 1x1
    ((2, 4, 8, 8), (6, 2, 3, 3), (1, 1), "same", (0, 0, 0, 0), (1, 1), 2),    # groups: scatter
    ((2, 3, 9, 8), (4, 3, 3, 3), (2, 2), "same", (0, 0, 0, 0), (1, 1), 1),    # stride: scatter
    ((2, 3, 9, 8), (4, 3, 3, 3), (2, 1), "pad", (1, 0, 1, 1), (1, 1), 1),
    ((2, 4, 8, 8), (5, 4, 1, 1), (2, 2), "same", (0, 0, 0, 0), (1, 1), 1),    # 1x1 strided
    ((1, 2, 11, 10), (3, 2, 5, 4), (3, 2), "pad", (2, 1, 0, 3), (1, 1), 1),   # stride 3, odd
    ((2, 2, 7, 9), (3, 2, 2, 2), (2, 3), "valid", (0, 0, 0, 0), (1, 1), 1),   # rows left over
    ((2, 2, 12, 9), (3, 2, 2, 3), (4, 4), "same", (0, 0, 0, 0), (1, 1), 1),   # stride > kernel
    ((2, 2, 9, 9), (3, 2, 3, 3), (2, 2), "same", (0, 0, 0, 0), (2, 1), 1),    # dilated strided
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("x_shape, w_shape, stride, pad_mode, padding, dilation, groups", CASES)
def test_input_gradient_matches_the_adjoint_of_the_definition(
        x_shape, w_shape, stride, pad_mode, padding, dilation, groups, dtype) -> None:
    rng = np.random.default_rng(sum(x_shape) * 7 + sum(w_shape))
    pads = window_pads(x_shape[2:], w_shape[2:], stride, dilation, pad_mode, padding)
    oh = (x_shape[2] + pads[0] + pads[1] - (w_shape[2] - 1) * dilation[0] - 1) // stride[0] + 1
    ow = (x_shape[3] + pads[2] + pads[3] - (w_shape[3] - 1) * dilation[1] - 1) // stride[1] + 1
    g = rng.standard_normal((x_shape[0], w_shape[0], oh, ow)).astype(dtype)
    w = rng.standard_normal(w_shape).astype(dtype)
    got = conv2d_grad_input(g, w, x_shape=x_shape, stride=stride, padding=padding,
                            pad_mode=pad_mode, dilation=dilation, groups=groups)
    assert got.shape == x_shape and got.dtype == dtype
    expected = adjoint_loops(g, w, x_shape, stride, pads, dilation, groups)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


class TwoConvs(nn.Cell):
    """A same-padded and a dilated stride-1 convolution, as a residual pair, summed through
    sin (an adjoint that differs at every pixel)."""

    def __init__(self) -> None:
        super().__init__()
        self.first = nn.Conv2d(2, 3, 3, pad_mode="same", has_bias=True)
        self.second = nn.Conv2d(3, 2, 3, pad_mode="pad", padding=2, dilation=2)

    def construct(self, x: np.ndarray) -> np.ndarray:
        return np.sin(self.second(np.tanh(self.first(x))) + x).sum()


def test_compiled_input_gradient_with_a_symbolic_batch_matches_finite_differences() -> None:
    amber.set_seed(0)
    net = TwoConvs()
    for p in net.get_parameters():
        p.set_data(p.asnumpy().astype(np.float64))
    grad = amber.jit(amber.grad(net), dynamic={"x": 0})
    for batch in (2, 3):
        x = np.random.default_rng(batch).standard_normal((batch, 2, 5, 4))
        numeric_dx = numeric.gradient(net.construct, (x,), 0)
        np.testing.assert_allclose(grad(x), numeric_dx, rtol=1e-6, atol=1e-6)
    assert "conv2d_grad_input" in grad.code and math.isfinite(float(grad(x).sum()))
