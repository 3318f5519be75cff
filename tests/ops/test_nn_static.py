"""Static-shape spellings (`OpDef.specialize`) of conv2d and max_pool2d: the generated code (im2col
+ one GEMM, in batches of images; pooling by reshape) computes exactly what the generic kernels
compute, for every geometry, and the spelling is chosen only where it applies."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amber.codegen import generate
from amber.graph import Builder, Graph, InsertPoint
from amber.ops import losses, nn, normalization, window

FAMILIES = (nn, window, normalization, losses)
"""The neural-network op families."""
from amber.ops.types import type_of

FN = {f.name: f for family in FAMILIES for f in family.FUNCTIONS}


def compiled(op_name: str, *args: np.ndarray, **kwargs) -> tuple[object, str]:
    """(result of the generated code for one `op_name` node over static `args`, its source)."""
    g = Graph("one")
    values = [g.body.add_param(type_of(a), f"a{i}") for i, a in enumerate(args)]
    inputs, attrs = FN[op_name].bind(*values, **kwargs)
    g.body.set_results([Builder(InsertPoint.at_end(g.body)).op(op_name, *inputs, **attrs)])
    code = generate(g)
    namespace: dict = {}
    exec(code.source, namespace)  # noqa: S102
    return namespace[code.function_name](*args), code.source


@st.composite
def conv_problems(draw):
    groups = draw(st.sampled_from([1, 1, 2]))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    kwargs = {"stride": (draw(st.integers(1, 2)), draw(st.integers(1, 2))),
              "dilation": (draw(st.integers(1, 2)), 1), "groups": groups}
    mode = draw(st.sampled_from(["valid", "same", "pad"]))
    kwargs["pad_mode"] = mode
    if mode == "pad":
        kwargs["padding"] = (draw(st.integers(0, 2)), draw(st.integers(0, 1)), 0, 1)
    n, c = draw(st.integers(1, 5)), groups * draw(st.integers(1, 2))
    h, w = draw(st.integers(kh * 2 + 1, 9)), draw(st.integers(kw * 2, 9))
    rng = np.random.default_rng(draw(st.integers(0, 1000)))
    x = rng.standard_normal((n, c, h, w), dtype=np.float32)
    weight = rng.standard_normal((2 * groups, c // groups, kh, kw), dtype=np.float32)
    bias = rng.standard_normal(2 * groups, dtype=np.float32) if draw(st.booleans()) else None
    return x, weight, bias, kwargs


@settings(max_examples=40, deadline=None)
@given(conv_problems())
def test_static_conv2d_matches_the_kernel(problem) -> None:
    x, weight, bias, kwargs = problem
    args = (x, weight) if bias is None else (x, weight, bias)
    want = FN["conv2d"](x, weight, bias, **kwargs)
    got, source = compiled("conv2d", *args, **kwargs)
    assert "conv2d_kernel" not in source  # the geometry is spelled out
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_large_batches_make_columns_a_few_images_at_a_time(monkeypatch) -> None:
    monkeypatch.setattr(window, "IM2COL_BYTES", 4 * 9 * 16 * 3)  # three images' columns
    rng = np.random.default_rng(0)
    x = rng.standard_normal((7, 1, 6, 6), dtype=np.float32)
    weight = rng.standard_normal((2, 1, 3, 3), dtype=np.float32)
    bias = rng.standard_normal(2, dtype=np.float32)
    got, source = compiled("conv2d", x, weight, bias)
    assert "conv2d_gemm(a0, a1, a2, kernel=(3, 3), out_size=(4, 4), step=3)" in source
    np.testing.assert_allclose(got, FN["conv2d"](x, weight, bias), rtol=1e-6, atol=1e-6)


def test_one_by_one_kernel_reads_the_pixels_without_im2col() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 5, 5), dtype=np.float32)
    weight = rng.standard_normal((4, 3, 1, 1), dtype=np.float32)
    for stride, cols in ((1, "a0.reshape(2, 3, 25)"), (2, "a0[:, :, ::2, ::2].reshape(2, 3, 9)")):
        got, source = compiled("conv2d", x, weight, stride=stride)
        assert cols in source and "def im2col" not in source.split("def one")[1]
        np.testing.assert_allclose(got, FN["conv2d"](x, weight, stride=stride), rtol=1e-6)


@pytest.mark.parametrize("shape, kernel", [((2, 3, 8, 8), 2), ((1, 2, 7, 9), (3, 2)),
                                           ((1, 1, 4, 4), 1), ((2, 1, 6, 5), (2, 1))])
@pytest.mark.parametrize("dtype", [np.float32, np.int16])
def test_pooling_by_reshape_matches_the_kernel(shape, kernel, dtype) -> None:
    x = np.random.default_rng(2).integers(-50, 50, shape).astype(dtype)
    x.flat[::7] = 0
    got, source = compiled("max_pool2d", x, kernel_size=kernel)
    assert "max_pool_blocks(a0, " in source
    want = FN["max_pool2d"](x, kernel)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    assert not np.shares_memory(got, x)  # a new array, even for a 1x1 window


@pytest.mark.parametrize("kwargs", [{"kernel_size": 3, "stride": 2},
                                    {"kernel_size": 2, "stride": 2, "padding": 1}])
def test_overlapping_or_padded_pooling_keeps_the_window_kernel(kwargs) -> None:
    x = np.random.default_rng(3).standard_normal((1, 2, 7, 7)).astype(np.float32)
    got, source = compiled("max_pool2d", x, **kwargs)
    assert "max_pool_blocks" not in source and "max_pool2d_kernel(" in source
    np.testing.assert_array_equal(got, FN["max_pool2d"](x, **kwargs))
