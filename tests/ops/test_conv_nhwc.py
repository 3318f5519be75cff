"""The channels-last convolution kernels the layout pass uses (ops/conv_nhwc.py): forward, weight
gradient and input gradient (stride 1 as a flipped-kernel convolution, strided as a scatter of
window rows) against float64 loops over the textbook definition, on NHWC arrays; padding
modes, strides, dilation, odd sizes, one image in bands of output rows, rows of pixel pairs
(at most 16 output channels), im2col columns (fewer than 16 input channels), row taps (stride 1
down), the strided input gradient in row phases."""
import os
import sys

import numpy as np
import pytest

from amber.ops.conv_nhwc import (conv2d_nhwc_grad_input_kernel, conv2d_nhwc_grad_weight_kernel,
                                 conv2d_nhwc_kernel)

sys.path.insert(0, os.path.dirname(__file__))
from test_conv_rows import CASES, conv_loops, weight_grad_loops  # noqa: E402

NHWC, NCHW = (0, 2, 3, 1), (0, 3, 1, 2)


PAIRS = [  # at most 16 output channels, stride 1 across, even output width: pixel pairs
    ((2, 16, 9, 10), (4, 16, 3, 3), (1, 1), (2, 2, 2, 2), (2, 2), 1),  # dilated pairs
    ((3, 24, 6, 8), (16, 24, 3, 5), (2, 1), (1, 1, 2, 2), (1, 1), 2),  # strided down only
    ((3, 16, 7, 7), (16, 16, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),  # odd width: no pairs
    ((2, 16, 6, 6), (17, 16, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),  # 17 channels: no pairs
]


@pytest.mark.parametrize("x_shape, w_shape, stride, pads, dilation, step", CASES + PAIRS)
def test_nhwc_kernels_match_the_definition(x_shape, w_shape, stride, pads, dilation,
                                           step) -> None:
    rng = np.random.default_rng(sum(x_shape) + 7 * sum(w_shape))
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    bias = rng.standard_normal(w_shape[0]).astype(np.float32)
    attrs = {"stride": stride, "padding": pads, "pad_mode": "pad", "dilation": dilation}
    expected = conv_loops(x, w, stride, pads, dilation) + bias[:, None, None]
    got = conv2d_nhwc_kernel(x.transpose(NHWC), w, bias, **attrs)
    assert got.shape == expected.transpose(NHWC).shape and got.dtype == np.float32
    np.testing.assert_allclose(got.transpose(NCHW), expected, rtol=1e-4, atol=1e-4)
    g = rng.standard_normal(expected.shape)
    dw = conv2d_nhwc_grad_weight_kernel(x.transpose(NHWC), g.transpose(NHWC), w_shape=w_shape,
                                        **attrs)
    np.testing.assert_allclose(dw, weight_grad_loops(x, g, w_shape, stride, pads, dilation),
                               rtol=1e-4, atol=1e-3)
    # NOTE: the input gradient is the transpose of the forward: <conv(x), g> == <x, dx>
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    dx = conv2d_nhwc_grad_input_kernel(g.transpose(NHWC), w64, x_shape=x_shape, **attrs)
    assert dx.shape == x.transpose(NHWC).shape
    np.testing.assert_allclose((conv_loops(x64, w64, stride, pads, dilation) * g).sum(),
                               (x64 * dx.transpose(NCHW)).sum(), rtol=1e-9)


@pytest.mark.parametrize("pad_mode, stride", [("same", (2, 2)), ("valid", (2, 1)),
                                              ("same", (1, 1))])
def test_nhwc_input_gradient_per_element(pad_mode, stride) -> None:
    """Each element of the input gradient, not only its inner product (odd sizes)."""
    rng = np.random.default_rng(5)
    x_shape, w = (2, 16, 7, 5), rng.standard_normal((3, 16, 3, 3))
    from amber.ops.conv_kernels import conv2d_grad_input
    g_shape = conv2d_nhwc_kernel(np.zeros((2, 7, 5, 16)), w, stride=stride,
                                 pad_mode=pad_mode).shape
    g = rng.standard_normal(g_shape)
    got = conv2d_nhwc_grad_input_kernel(g, w, x_shape=x_shape, stride=stride, pad_mode=pad_mode)
    expected = conv2d_grad_input(g.transpose(NCHW), w, x_shape=x_shape, stride=stride,
                                 pad_mode=pad_mode)
    np.testing.assert_allclose(got.transpose(NCHW), expected, rtol=1e-10, atol=1e-10)


ROW_TAPS = [  # x_shape, w_shape, stride, pads, dilation: several images, <= 32 channels
    ((3, 48, 5, 17), (5, 48, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),     # 48 channels, 17 across
    ((2, 32, 14, 199), (3, 32, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),  # weight gradient in bands
    ((1, 24, 7, 9), (5, 24, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),      # one image: all taps
    ((9, 24, 6, 7), (5, 24, 3, 2), (1, 1), (1, 0, 0, 1), (1, 1)),      # blocks, the last partial
    ((2, 16, 12, 11), (4, 16, 4, 3), (1, 2), (3, 1, 2, 0), (3, 2)),    # dilated, strided across
    ((2, 32, 3, 9), (3, 32, 3, 3), (1, 1), (0, 0, 1, 1), (1, 1)),      # one output row
    ((2, 40, 6, 6), (3, 40, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),      # 40 channels: all taps
    ((3, 16, 9, 8), (5, 16, 3, 3), (2, 2), (1, 1, 1, 1), (1, 1)),      # stride 2 down: residues
    ((2, 24, 13, 9), (4, 24, 5, 3), (3, 1), (2, 0, 1, 1), (2, 1)),     # stride 3, dilated down
    ((2, 16, 9, 9), (3, 16, 2, 2), (3, 3), (0, 0, 0, 0), (1, 1)),      # stride 3 > 2: all taps
]


@pytest.mark.parametrize("x_shape, w_shape, stride, pads, dilation", ROW_TAPS)
def test_row_taps_forward_and_gradients(x_shape, w_shape, stride, pads, dilation) -> None:
    """nhwc_row_taps (each input row's windows across shared by the kernel rows) and its
    weight gradient against float64 loops over the definition; the stride-1 input gradient
    takes row taps too."""
    rng = np.random.default_rng(sum(x_shape) + sum(w_shape))
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    bias = rng.standard_normal(w_shape[0])
    attrs = {"stride": stride, "padding": pads, "pad_mode": "pad", "dilation": dilation}
    expected = conv_loops(x, w, stride, pads, dilation) + bias[:, None, None]
    got = conv2d_nhwc_kernel(x.transpose(NHWC), w, bias, **attrs)
    np.testing.assert_allclose(got.transpose(NCHW), expected, rtol=1e-10, atol=1e-10)
    single = conv2d_nhwc_kernel(x.transpose(NHWC).astype(np.float32), w.astype(np.float32),
                                bias.astype(np.float32), **attrs)
    assert single.dtype == np.float32
    np.testing.assert_allclose(single.transpose(NCHW), expected, rtol=1e-4, atol=1e-4)
    g = rng.standard_normal(expected.shape)
    dw = conv2d_nhwc_grad_weight_kernel(x.transpose(NHWC), g.transpose(NHWC), w_shape=w_shape,
                                        **attrs)
    np.testing.assert_allclose(dw, weight_grad_loops(x, g, w_shape, stride, pads, dilation),
                               rtol=1e-10, atol=1e-10)
    if stride == (1, 1):
        from amber.ops.conv_kernels import conv2d_grad_input
        dx = conv2d_nhwc_grad_input_kernel(g.transpose(NHWC), w, x_shape=x_shape, **attrs)
        np.testing.assert_allclose(dx.transpose(NCHW), conv2d_grad_input(
            g, w, x_shape=x_shape, **attrs), rtol=1e-10, atol=1e-10)


PHASE_RUNS = [  # x_shape, w_shape, stride, pads, dilation: strided across, dilation 1 across
    ((3, 16, 9, 8), (5, 16, 3, 3), (2, 2), (1, 1, 1, 1), (1, 1)),   # the ResNet's geometry
    ((2, 16, 11, 13), (4, 16, 5, 5), (3, 3), (2, 1, 0, 3), (1, 1)),  # zero taps past the kernel
    ((2, 16, 8, 8), (3, 16, 2, 2), (2, 2), (0, 0, 0, 0), (1, 1)),   # stride == kernel: no overlap
    ((2, 16, 10, 9), (3, 16, 3, 3), (1, 2), (2, 0, 1, 1), (2, 1)),  # dilated down, strided across
    ((9, 16, 6, 7), (3, 16, 3, 2), (2, 2), (1, 1, 0, 1), (1, 1)),   # several blocks of images
    ((1, 16, 13, 11), (4, 16, 2, 3), (3, 3), (1, 0, 2, 1), (1, 1)),  # one image, rows no tap reads
    ((3, 16, 9, 10), (5, 16, 3, 3), (2, 2), (1, 1, 1, 1), (2, 1)),   # dilation = stride: odd rows 0
    ((5, 16, 10, 9), (3, 16, 4, 3), (3, 2), (0, 2, 1, 1), (2, 1)),   # a phase's rows 2 apart
    ((2, 16, 9, 8), (3, 16, 3, 3), (2, 2), (0, 4, 0, 3), (1, 1)),    # adjoint past the crop
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("x_shape, w_shape, stride, pads, dilation", PHASE_RUNS)
def test_strided_input_gradient_in_phase_rows_per_element(x_shape, w_shape, stride, pads,
                                                          dilation, dtype) -> None:
    """nhwc_phase_rows (one window-row GEMM per row phase, written into its rows) against the
    NCHW scatter of window columns, each element, and the adjoint identity."""
    from amber.ops.conv_kernels import conv2d_grad_input
    rng = np.random.default_rng(sum(x_shape) + sum(w_shape))
    attrs = {"stride": stride, "padding": pads, "pad_mode": "pad", "dilation": dilation}
    x = rng.standard_normal(x_shape)
    w = rng.standard_normal(w_shape)
    g = rng.standard_normal(conv_loops(x, w, stride, pads, dilation).shape)
    got = conv2d_nhwc_grad_input_kernel(g.transpose(NHWC).astype(dtype), w.astype(dtype),
                                        x_shape=x_shape, **attrs)
    assert got.shape == x.transpose(NHWC).shape and got.dtype == dtype
    expected = conv2d_grad_input(g, w, x_shape=x_shape, **attrs)
    tolerance = 1e-12 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(got.transpose(NCHW), expected, rtol=tolerance, atol=tolerance)
    np.testing.assert_allclose((conv_loops(x, w, stride, pads, dilation) * g).sum(),
                               (x * expected).sum(), rtol=1e-10)


FEW_CHANNELS = [  # x_shape (NCHW), w_shape, stride, pads, dilation: im2col columns, NHWC out
    ((5, 3, 9, 7), (4, 3, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),     # a stem
    ((3, 1, 8, 11), (6, 1, 5, 4), (2, 3), (0, 2, 1, 0), (1, 1)),     # odd kernel, asymmetric
    ((2, 8, 9, 9), (3, 8, 3, 2), (1, 2), (2, 2, 1, 0), (2, 1)),      # dilated
    ((4, 15, 6, 5), (7, 15, 1, 1), (2, 2), (0, 0, 0, 0), (1, 1)),    # 1x1 strided
    ((1, 3, 45, 47), (3, 3, 3, 3), (1, 1), (1, 0, 2, 1), (1, 1)),    # one large image
    ((48, 3, 16, 16), (16, 3, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),  # two blocks of images
]


@pytest.mark.parametrize("x_shape, w_shape, stride, pads, dilation", FEW_CHANNELS)
def test_few_channels_take_columns_and_write_nhwc(x_shape, w_shape, stride, pads,
                                                  dilation) -> None:
    """Below 16 input channels the forward and weight gradient read im2col columns of the
    channels-first order: a transposed view of an NCHW input (the layout pass's stem) and a
    channels-last array give the definition's values; on threads the same bits."""
    from amber.ops.parallel import hold_blas, kernel_threads
    rng = np.random.default_rng(sum(x_shape))
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    bias = rng.standard_normal(w_shape[0]).astype(np.float32)
    attrs = {"stride": stride, "padding": pads, "pad_mode": "pad", "dilation": dilation}
    expected = conv_loops(x, w, stride, pads, dilation) + bias[:, None, None]
    g = rng.standard_normal(expected.shape).astype(np.float32)
    dw_expected = weight_grad_loops(x, g, w_shape, stride, pads, dilation)
    for xh in (x.transpose(NHWC), np.ascontiguousarray(x.transpose(NHWC))):
        hold_blas(kernel_threads(), 1)  # NOTE: one thread's bits are at one BLAS thread
        try:
            got = conv2d_nhwc_kernel(xh, w, bias, **attrs)
            dw = conv2d_nhwc_grad_weight_kernel(xh, g.transpose(NHWC), w_shape=w_shape, **attrs)
        finally:
            hold_blas(kernel_threads(), -1)
        assert got.flags.c_contiguous and got.shape == expected.transpose(NHWC).shape
        np.testing.assert_allclose(got.transpose(NCHW), expected, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(dw, dw_expected, rtol=1e-4, atol=1e-3)
        assert dw.shape == w_shape and dw.flags.c_contiguous
        assert np.array_equal(conv2d_nhwc_kernel(xh, w, bias, threads=2, **attrs), got)
        assert np.array_equal(conv2d_nhwc_grad_weight_kernel(
            xh, g.transpose(NHWC), w_shape=w_shape, threads=2, **attrs), dw)


@pytest.mark.parametrize("shape, unit", [((64, 32, 16), 32), ((2, 96, 24), 96),
                                         ((1024, 64, 3), 64), ((4, 16, 6), 1)])
def test_a_wide_bias_adds_the_bits_of_a_broadcast_add(shape, unit) -> None:
    """wide_bias repeats a bias over rows (a power of two dividing `unit`, up to 1024 floats)
    and add_bias adds it, also to a strided view: the bits of `rows + bias`."""
    from amber.ops.conv_kernels import add_bias, wide_bias
    rng = np.random.default_rng(len(shape))
    rows = rng.standard_normal(shape).astype(np.float32)
    bias = rng.standard_normal(shape[-1]).astype(np.float32)
    (wide,) = wide_bias((bias,), unit, 1 << 16)
    assert wide.size % bias.size == 0 and unit % (wide.size // bias.size) == 0
    assert wide.size > bias.size or unit == 1
    expected = rows + bias
    add_bias(rows, wide)
    assert np.array_equal(rows, expected)
    strided = rng.standard_normal(shape[::-1]).astype(np.float32).transpose(2, 1, 0)
    expected = strided + bias
    add_bias(strided, wide)
    assert np.array_equal(strided, expected)
