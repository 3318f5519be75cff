"""conv2d against the textbook definition: seven nested loops over (n, o, oh, ow, c, kh, kw)."""
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


def same_pads(size, k, s, d):
    """MindSpore 'same': out = ceil(size / s), the odd padding pixel goes to the bottom/right."""
    out = math.ceil(size / s)
    total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
    return total // 2, total - total // 2


def conv2d_loops(x, w, b, stride, pads, dilation, groups):
    """Direct convolution, one multiply-add at a time, in float64."""
    n_, c_, h_, w_ = x.shape
    o_, cg_, kh_, kw_ = w.shape
    (sh, sw), (dh, dw), (top, bottom, left, right) = stride, dilation, pads
    oh_ = (h_ + top + bottom - (kh_ - 1) * dh - 1) // sh + 1
    ow_ = (w_ + left + right - (kw_ - 1) * dw - 1) // sw + 1
    out = np.zeros((n_, o_, oh_, ow_))
    per_group = o_ // groups
    for n in range(n_):
        for o in range(o_):
            g = o // per_group
            for oh in range(oh_):
                for ow in range(ow_):
                    acc = 0.0 if b is None else float(b[o])
                    for c in range(cg_):
                        for kh in range(kh_):
                            for kw in range(kw_):
                                row = oh * sh + kh * dh - top
                                col = ow * sw + kw * dw - left
                                if 0 <= row < h_ and 0 <= col < w_:
                                    acc += float(x[n, g * cg_ + c, row, col]) * \
                                        float(w[o, c, kh, kw])
                    out[n, o, oh, ow] = acc
    return out


def check(x, w, b=None, stride=1, pad_mode="valid", padding=0, dilation=1, groups=1):
    """Run `ops.conv2d` and the loops (pads resolved independently) and compare."""
    got = FN["conv2d"](x, w, b, stride=stride, pad_mode=pad_mode, padding=padding,
                       dilation=dilation, groups=groups)
    st_ = (stride, stride) if isinstance(stride, int) else stride
    dl = (dilation, dilation) if isinstance(dilation, int) else dilation
    if pad_mode == "same":
        pads = same_pads(x.shape[2], w.shape[2], st_[0], dl[0]) + \
            same_pads(x.shape[3], w.shape[3], st_[1], dl[1])
    elif isinstance(padding, int):
        pads = (padding,) * 4
    elif len(padding) == 2:
        pads = (padding[0], padding[0], padding[1], padding[1])
    else:
        pads = padding
    want = conv2d_loops(x, w, b, st_, pads, dl, groups)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    return got


def arrays(rng, x_shape, w_shape, bias=True, dtype=np.float32):
    x = rng.standard_normal(x_shape).astype(dtype)
    w = rng.standard_normal(w_shape).astype(dtype)
    b = rng.standard_normal(w_shape[0]).astype(dtype) if bias else None
    return x, w, b


CASES = [
    # x shape, w shape, keyword arguments
    ((1, 1, 5, 5), (1, 1, 3, 3), {}),
    ((2, 3, 7, 6), (4, 3, 3, 2), {"stride": 2}),
    ((2, 3, 7, 6), (4, 3, 3, 3), {"stride": (2, 1), "pad_mode": "pad", "padding": 1}),
    ((1, 2, 6, 7), (3, 2, 3, 3), {"pad_mode": "pad", "padding": (0, 2, 1, 0)}),
    ((1, 2, 6, 7), (3, 2, 2, 3), {"pad_mode": "pad", "padding": (2, 1)}),
    ((2, 2, 7, 7), (2, 2, 3, 3), {"pad_mode": "same"}),
    ((1, 2, 8, 9), (3, 2, 4, 2), {"pad_mode": "same", "stride": 3}),
    ((1, 2, 9, 9), (2, 2, 3, 3), {"dilation": 2}),
    ((1, 2, 9, 8), (2, 2, 3, 2), {"dilation": (2, 3), "pad_mode": "same", "stride": 2}),
    ((2, 4, 6, 6), (6, 2, 3, 3), {"groups": 2, "pad_mode": "pad", "padding": 1}),
    ((1, 3, 5, 5), (3, 1, 3, 3), {"groups": 3}),  # depthwise
    ((1, 3, 5, 5), (6, 1, 2, 2), {"groups": 3, "stride": 2}),  # depthwise, multiplier 2
    ((1, 2, 1, 9), (1, 2, 1, 4), {"stride": (1, 3)}),
    ((1, 1, 3, 3), (2, 1, 3, 3), {"pad_mode": "same", "stride": 4}),
]


@pytest.mark.parametrize("x_shape, w_shape, kwargs", CASES)
@pytest.mark.parametrize("bias", [False, True])
def test_conv2d_matches_loops(x_shape, w_shape, kwargs, bias):
    x, w, b = arrays(np.random.default_rng(0), x_shape, w_shape, bias)
    got = check(x, w, b, **kwargs)
    assert got.dtype == np.float32


def test_same_mode_output_is_ceil_of_input_over_stride():
    x, w, _ = arrays(np.random.default_rng(1), (1, 1, 11, 10), (1, 1, 4, 3), False)
    for s in (1, 2, 3, 4):
        got = check(x, w, stride=s, pad_mode="same")
        assert got.shape[2:] == (math.ceil(11 / s), math.ceil(10 / s))


def test_float64_and_mixed_dtypes_follow_numpy():
    x, w, b = arrays(np.random.default_rng(2), (1, 2, 4, 4), (2, 2, 2, 2), True, np.float64)
    assert check(x, w, b).dtype == np.float64
    mixed = window.conv2d(x.astype(np.float32), w, b.astype(np.float32))
    assert mixed.dtype == np.result_type(np.float32, np.float64)


def test_conv2d_primitive_spelling():
    x, w, _ = arrays(np.random.default_rng(3), (2, 4, 7, 7), (6, 2, 3, 3), False)
    prim = window.Conv2D(6, 3, pad_mode="pad", pad=(1, 0, 2, 1), stride=2, dilation=1, group=2)
    want = conv2d_loops(x, w, None, (2, 2), (1, 0, 2, 1), (1, 1), 2)
    np.testing.assert_allclose(prim(x, w), want, rtol=1e-4, atol=1e-4)
    inputs, attrs = prim.bind("x", "w")
    assert inputs == ("x", "w") and attrs["padding"] == (1, 0, 2, 1) and attrs["groups"] == 2


def spatial(draw, k, s, d, pads):
    """An input length the dilated kernel fits once padded."""
    span = (k - 1) * d + 1
    return max(1, span - pads) + draw(st.integers(0, 4))


@st.composite
def conv_problems(draw):
    groups = draw(st.sampled_from([1, 2, 3]))
    cg, og = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    pad_mode = draw(st.sampled_from(["valid", "same", "pad"]))
    padding = tuple(draw(st.integers(0, 2)) for _ in range(4)) if pad_mode == "pad" else 0
    pads = padding if pad_mode == "pad" else (0, 0, 0, 0)
    h = spatial(draw, kh, stride[0], dilation[0], pads[0] + pads[1])
    w = spatial(draw, kw, stride[1], dilation[1], pads[2] + pads[3])
    x_shape = (draw(st.integers(1, 2)), cg * groups, h, w)
    kwargs = {"stride": stride, "dilation": dilation, "pad_mode": pad_mode, "padding": padding,
              "groups": groups}
    return x_shape, (og * groups, cg, kh, kw), draw(st.booleans()), kwargs, draw(st.integers(0, 99))


@settings(max_examples=50, deadline=None)
@given(conv_problems())
def test_conv2d_random_problems_match_loops_and_infer(problem):
    x_shape, w_shape, bias, kwargs, seed = problem
    x, w, b = arrays(np.random.default_rng(seed), x_shape, w_shape, bias)
    got = check(x, w, b, **kwargs)
    inputs, attrs = FN["conv2d"].bind(x, w, b, **kwargs)
    assert window.conv2d.infer(*map(type_of, inputs), **attrs) == type_of(got)


def test_infer_keeps_symbolic_batch_and_same_spatial_dims():
    x = Tensor(("N", 3, "H", "W"), np.float32)
    w = Tensor((8, 3, 3, 3), np.float32)
    attrs = window.conv2d.full_attrs({"pad_mode": "same"})
    assert window.conv2d.infer(x, w, **attrs) == Tensor(("N", 8, "H", "W"), np.float32)
    strided = window.conv2d.full_attrs({"stride": (2, 2)})
    assert window.conv2d.infer(x, w, **strided) == \
        Tensor(("N", 8, "(H+1)//2-1", "(W+1)//2-1"), np.float32)  # (H-3)//2+1
    padded = window.conv2d.full_attrs({"pad_mode": "pad", "padding": (1, 1, 1, 1)})
    assert window.conv2d.infer(x, w, **padded) == Tensor(("N", 8, "H", "W"), np.float32)
    valid = window.conv2d.full_attrs({})
    assert window.conv2d.infer(Tensor(("N", 3, "?", 9), np.float32), w, **valid).shape[2:] == \
        ("?", 7)


def test_errors_name_the_op_and_shapes():
    x, w = Tensor((2, 3, 8, 8), np.float32), Tensor((4, 2, 3, 3), np.float32)
    attrs = window.conv2d.full_attrs({})
    with pytest.raises(ValueError, match=r"conv2d: input f32\[2,3,8,8\] has 3 channels.*"
                                         r"f32\[4,2,3,3\].*expects 2"):
        window.conv2d.infer(x, w, **attrs)
    with pytest.raises(ValueError, match="not divisible by groups=3"):
        window.conv2d.infer(Tensor((1, 3, 8, 8), np.float32), Tensor((4, 1, 3, 3), np.float32),
                        **window.conv2d.full_attrs({"groups": 3}))
    with pytest.raises(ValueError, match="conv2d: a window spanning 5 does not fit"):
        window.conv2d.infer(Tensor((1, 3, 4, 8), np.float32), Tensor((1, 3, 5, 1), np.float32),
                        **attrs)
    with pytest.raises(ValueError, match="conv2d: bias"):
        window.conv2d.infer(x, Tensor((4, 3, 3, 3), np.float32), Tensor((5,), np.float32), **attrs)
    with pytest.raises(ValueError, match="conv2d: input"):  # the eager kernel checks too
        window.conv2d(np.zeros((2, 3, 8, 8)), np.zeros((4, 2, 3, 3)))
    with pytest.raises(ValueError, match="conv2d: a 3x3 window does not fit"):
        window.conv2d(np.zeros((1, 1, 2, 2)), np.zeros((1, 1, 3, 3)))


def test_binder_validates_and_canonicalizes_attributes():
    bind = FN["conv2d"].bind
    _, attrs = bind("x", "w", stride=(1, 1, 2, 3), pad_mode="PAD", padding=(1, 2))
    assert attrs["stride"] == (2, 3) and attrs["padding"] == (1, 1, 2, 2)
    assert bind("x", "w", pad_mode="pad", padding=0)[1]["pad_mode"] == "valid"
    with pytest.raises(ValueError, match="padding must be 0 unless pad_mode='pad'"):
        bind("x", "w", pad_mode="same", padding=1)
    with pytest.raises(ValueError, match="pad_mode must be"):
        bind("x", "w", pad_mode="full")
    with pytest.raises(ValueError, match="stride must be a positive int"):
        bind("x", "w", stride=0)
    with pytest.raises(TypeError, match="not in canonical form"):
        window.conv2d.infer(Tensor((1, 1, 4, 4), np.float32), Tensor((1, 1, 2, 2), np.float32),
                        **window.conv2d.full_attrs({"stride": 2}))
