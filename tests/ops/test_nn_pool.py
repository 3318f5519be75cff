"""max_pool2d and avg_pool2d against explicit loops over every output pixel and window cell."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amber.ops import losses, nn, normalization, window

FAMILIES = (nn, window, normalization, losses)
"""The neural-network op families."""
from amber.ops.types import Tensor, type_of

FN = {f.name: f for family in FAMILIES for f in family.FUNCTIONS}


def same_pads(size, k, s):
    out = math.ceil(size / s)
    total = max((out - 1) * s + k - size, 0)
    return total // 2, total - total // 2


def pool_loops(x, kernel, stride, pads, mode, dilation=(1, 1), count_include_pad=True,
               divisor=0):
    """Pool by visiting each window cell; cells in the padding are skipped."""
    n_, c_, h_, w_ = x.shape
    (kh, kw), (sh, sw), (dh, dw), (top, bottom, left, right) = kernel, stride, dilation, pads
    oh_ = (h_ + top + bottom - (kh - 1) * dh - 1) // sh + 1
    ow_ = (w_ + left + right - (kw - 1) * dw - 1) // sw + 1
    out = np.zeros((n_, c_, oh_, ow_))
    for n in range(n_):
        for c in range(c_):
            for i in range(oh_):
                for j in range(ow_):
                    cells = [x[n, c, i * sh + p * dh - top, j * sw + q * dw - left]
                             for p in range(kh) for q in range(kw)
                             if 0 <= i * sh + p * dh - top < h_
                             and 0 <= j * sw + q * dw - left < w_]
                    if mode == "max":
                        out[n, c, i, j] = max(cells)
                    else:
                        count = divisor or (kh * kw if count_include_pad else len(cells))
                        out[n, c, i, j] = sum(float(v) for v in cells) / count
    return out


def rand(shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


MAX_CASES = [
    # shape, functional keyword arguments, (kernel, stride, pads, dilation) for the loops
    ((1, 1, 4, 4), {"kernel_size": 2}, ((2, 2), (2, 2), (0, 0, 0, 0), (1, 1))),
    ((2, 3, 7, 5), {"kernel_size": 2}, ((2, 2), (2, 2), (0, 0, 0, 0), (1, 1))),  # crops
    ((1, 2, 7, 7), {"kernel_size": 3, "stride": 2, "padding": 1},
     ((3, 3), (2, 2), (1, 1, 1, 1), (1, 1))),
    ((1, 2, 6, 8), {"kernel_size": (2, 3), "stride": (1, 2), "padding": (1, 0)},
     ((2, 3), (1, 2), (1, 1, 0, 0), (1, 1))),
    ((1, 1, 8, 8), {"kernel_size": 2, "stride": 1, "dilation": 2},
     ((2, 2), (1, 1), (0, 0, 0, 0), (2, 2))),
    ((1, 1, 5, 6), {"kernel_size": 3, "stride": 3, "padding": (0, 1, 1, 0)},
     ((3, 3), (3, 3), (0, 1, 1, 0), (1, 1))),
]


@pytest.mark.parametrize("shape, kwargs, ref", MAX_CASES)
def test_max_pool2d_matches_loops(shape, kwargs, ref):
    x = rand(shape)
    got = FN["max_pool2d"](x, **kwargs)
    kernel, stride, pads, dilation = ref
    np.testing.assert_array_equal(got, pool_loops(x, kernel, stride, pads, "max", dilation))
    assert got.dtype == np.float32


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.bool_])
def test_max_pool2d_integer_padding_never_wins(dtype):
    x = (np.random.default_rng(1).integers(0, 3, (1, 2, 5, 5)) - (dtype == np.int32)).astype(dtype)
    got = FN["max_pool2d"](x, 3, 2, padding=1)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, pool_loops(x, (3, 3), (2, 2), (1,) * 4, "max"))


AVG_CASES = [
    ((2, 2, 6, 6), {"kernel_size": 2, "stride": 2}, ((2, 2), (2, 2), (0, 0, 0, 0), True, 0)),
    ((1, 2, 7, 5), {"kernel_size": 3}, ((3, 3), (1, 1), (0, 0, 0, 0), True, 0)),  # stride 1
    ((1, 2, 7, 7), {"kernel_size": 3, "stride": 2, "padding": 1},
     ((3, 3), (2, 2), (1, 1, 1, 1), True, 0)),
    ((1, 2, 7, 7), {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False},
     ((3, 3), (2, 2), (1, 1, 1, 1), False, 0)),
    ((1, 1, 6, 7), {"kernel_size": (2, 4), "stride": (2, 3), "padding": (1, 0, 2, 1),
                    "count_include_pad": False}, ((2, 4), (2, 3), (1, 0, 2, 1), False, 0)),
    ((1, 1, 6, 6), {"kernel_size": 2, "stride": 2, "divisor_override": 3},
     ((2, 2), (2, 2), (0, 0, 0, 0), True, 3)),
]


@pytest.mark.parametrize("shape, kwargs, ref", AVG_CASES)
def test_avg_pool2d_matches_loops(shape, kwargs, ref):
    x = rand(shape)
    got = FN["avg_pool2d"](x, **kwargs)
    kernel, stride, pads, include, divisor = ref
    want = pool_loops(x, kernel, stride, pads, "avg", count_include_pad=include, divisor=divisor)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert got.dtype == np.float32


def test_avg_pool2d_of_integers_is_float64_like_np_mean():
    x = np.arange(32, dtype=np.int32).reshape(1, 2, 4, 4)
    got = FN["avg_pool2d"](x, 2, 2)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, pool_loops(x, (2, 2), (2, 2), (0,) * 4, "avg"))


@pytest.mark.parametrize("prim, mode", [(window.MaxPool, "max"), (window.AvgPool, "avg")])
@pytest.mark.parametrize("pad_mode", ["valid", "same", "SAME"])
def test_primitives_with_mindspore_pad_modes(prim, mode, pad_mode):
    """MaxPool/AvgPool 'same': out = ceil(in / stride); AvgPool leaves padding out of the mean."""
    x = rand((2, 3, 7, 8), seed=2)
    got = prim(kernel_size=3, strides=2, pad_mode=pad_mode)(x)
    pads = same_pads(7, 3, 2) + same_pads(8, 3, 2) if pad_mode != "valid" else (0,) * 4
    want = pool_loops(x, (3, 3), (2, 2), pads, mode, count_include_pad=False)
    if pad_mode != "valid":
        assert got.shape == (2, 3, math.ceil(7 / 2), math.ceil(8 / 2))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_nchw_four_tuples_in_primitives():
    x = rand((1, 1, 6, 6))
    got = window.MaxPool(kernel_size=(1, 1, 2, 3), strides=(1, 1, 2, 3))(x)
    np.testing.assert_array_equal(got, pool_loops(x, (2, 3), (2, 3), (0,) * 4, "max"))


@st.composite
def pool_problems(draw):
    kernel = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    pads = tuple(draw(st.integers(0, k // 2)) for k in (kernel[0], kernel[0], kernel[1],
                                                       kernel[1]))
    size = tuple(max(1, k - p) + draw(st.integers(0, 4))
                 for k, p in ((kernel[0], pads[0] + pads[1]), (kernel[1], pads[2] + pads[3])))
    return (draw(st.integers(1, 2)), draw(st.integers(1, 3))) + size, kernel, stride, pads, \
        draw(st.booleans()), draw(st.integers(0, 99))


@settings(max_examples=50, deadline=None)
@given(pool_problems())
def test_random_pools_match_loops_and_infer(problem):
    shape, kernel, stride, pads, include, seed = problem
    x = rand(shape, seed)
    for name, mode, extra in (("max_pool2d", "max", {}),
                              ("avg_pool2d", "avg", {"count_include_pad": include})):
        inputs, attrs = FN[name].bind(x, kernel, stride, padding=pads, **extra)
        got = getattr(window, name)(*inputs, **attrs)
        want = pool_loops(x, kernel, stride, pads, mode, count_include_pad=include)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        assert getattr(window, name).infer(type_of(x), **attrs) == type_of(got)


def test_infer_symbolic_batch_and_same_mode():
    attrs = window.MaxPool(kernel_size=3, strides=1, pad_mode="same").bind("x")[1]
    assert window.max_pool2d.infer(Tensor(("N", 4, "H", 9), np.float32), **attrs) == \
        Tensor(("N", 4, "H", 9), np.float32)
    attrs = FN["avg_pool2d"].bind("x", 2, 2)[1]
    assert window.avg_pool2d.infer(Tensor(("N", 4, 8, "W"), np.float32), **attrs) == \
        Tensor(("N", 4, 4, "W//2"), np.float32)


def test_pool_errors():
    with pytest.raises(ValueError, match="max_pool2d: padding .* at most half the kernel"):
        FN["max_pool2d"].bind("x", 2, padding=2)
    with pytest.raises(ValueError, match=r"max_pool2d: input \(NCHW\) must be 4-d, got f32\[3,4\]"):
        window.max_pool2d.infer(Tensor((3, 4), np.float32), **FN["max_pool2d"].bind("x", 2)[1])
    with pytest.raises(ValueError, match="avg_pool2d: a window spanning 3 does not fit"):
        window.avg_pool2d.infer(Tensor((1, 1, 2, 8), np.float32), **FN["avg_pool2d"].bind("x", 3)[1])
    with pytest.raises(ValueError, match="MaxPool: pad_mode must be 'valid' or 'same'"):
        window.MaxPool(2, 2, pad_mode="pad")
    with pytest.raises(NotImplementedError, match="ceil_mode"):
        FN["max_pool2d"].bind("x", 2, ceil_mode=True)


@pytest.mark.parametrize("shape,kernel", [((2, 3, 8, 6), (2, 2)), ((1, 2, 7, 9), (2, 3)),
                                          ((2, 1, 6, 6), (3, 3))])
def test_max_pool_grad_of_blocks_matches_the_general_rule(shape, kernel):
    """Non-overlapping windows take the fast path; it must route each adjoint exactly as the
    window masks do, ties (the first maximum wins) and uncovered edges included."""
    from amber.ops import nn_kernels
    x = np.round(rand(shape, 3) * 2).astype(np.float32)  # NOTE: few values: many ties
    attrs = {"kernel_size": kernel, "stride": kernel}
    out = window.max_pool2d(x, **attrs)
    g = rand(out.shape, 4)
    fast = nn_kernels.max_pool2d_grad(x, out, g, **attrs)
    pads = (0, 0, 0, 0)
    masks = nn_kernels.first_maxima(x, out, kernel, kernel, (1, 1), pads)
    general = nn_kernels.scatter_windows((masks * g[:, :, None, None]).astype(g.dtype),
                                         x.shape, kernel, kernel, (1, 1), pads)
    np.testing.assert_array_equal(fast, general)
    assert fast.dtype == g.dtype and fast.shape == x.shape
    assert (masks.sum(axis=(2, 3)) == 1).all()  # each window routed to one element
