"""Reductions: kernels against explicit loops, infer against the kernel on random shapes, axes
and dtypes, NumPy's accumulator dtypes, and the NumPy / method / MindSpore spellings."""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import amber.ops as ops
from amber.ops import reduce as rd
from amber.ops import registry
from amber.ops.types import Tensor, type_of

DTYPES = [np.bool_, np.int8, np.int32, np.int64, np.uint8, np.float16, np.float32, np.float64]
LOOP_REF = {  # op name -> reduce a Python list of items
    "sum": sum, "mean": lambda v: sum(v) / len(v), "prod": math.prod, "reduce_max": max,
    "reduce_min": min, "all": all, "any": any,
    "argmax": lambda v: max(range(len(v)), key=lambda i: (v[i], -i)),
    "argmin": lambda v: min(range(len(v)), key=lambda i: (v[i], i)),
}


def loop_reduce(f, x, axis):
    """Reduce `x` over one axis with explicit loops over every other index."""
    rest = [range(n) for i, n in enumerate(x.shape) if i != axis]
    out = {}
    for idx in itertools.product(*rest):
        items = [x[idx[:axis] + (k,) + idx[axis:]] for k in range(x.shape[axis])]
        out[idx] = f([v.item() for v in items])
    return np.array([out[i] for i in itertools.product(*rest)]).reshape(
        [n for i, n in enumerate(x.shape) if i != axis])


REDUCTIONS = [op for op in rd.OPS if op.name != "cumsum"]


def test_reference_covers_every_reduction():
    assert {op.name for op in REDUCTIONS} == set(LOOP_REF)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), dtype=st.sampled_from(DTYPES),
       shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3))
def test_cumsum_is_a_running_sum_of_numpys_dtype(data, dtype, shape):
    """Infer gives the kernel's type; along an axis each entry is the loop's running sum."""
    rank = len(shape)
    axis = data.draw(st.one_of(st.none(), st.integers(-max(rank, 1), max(rank, 1) - 1)))
    x = np.random.default_rng(1).integers(0, 3, shape).astype(dtype)
    op = registry.OPS["cumsum"]
    got = op.kernel(x, axis=axis)
    assert op.infer(type_of(x), axis=axis) == type_of(got)
    flat = x.reshape(-1) if axis is None else np.moveaxis(x.reshape(x.shape or (1,)), axis, -1)
    want = np.zeros(flat.shape, got.dtype)
    for idx in np.ndindex(flat.shape[:-1]):
        running = got.dtype.type(0)
        for k in range(flat.shape[-1]):
            running = running + got.dtype.type(flat[idx + (k,)])
            want[idx + (k,)] = running
    np.testing.assert_allclose(got if axis is None else np.moveaxis(got, axis, -1), want,
                               rtol=1e-3)


@pytest.mark.parametrize("name", sorted(LOOP_REF))
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_kernel_matches_loops(name, axis):
    x = np.random.default_rng(3).integers(-4, 5, (3, 4, 2)).astype(np.float64)
    got = registry.OPS[name](x, axis=axis)
    np.testing.assert_allclose(got, loop_reduce(LOOP_REF[name], x, axis % 3))


def test_axis_none_tuple_and_keepdims():
    x = np.arange(1, 25, dtype=np.float32).reshape(2, 3, 4)
    assert ops.reduce_sum(x) == sum(range(1, 25))
    got = registry.OPS["sum"](x, axis=(0, 2), keepdims=True)
    assert got.shape == (1, 3, 1)
    for j in range(3):
        assert got[0, j, 0] == sum(x[i, j, k] for i in range(2) for k in range(4))
    assert registry.OPS["argmax"](x, axis=None) == 23
    assert registry.OPS["argmax"](x, axis=1, keepdims=True).shape == (2, 1, 4)


def random_axis(draw, rank, single):
    if single:
        return draw(st.one_of(st.none(), st.integers(-rank, rank - 1))) if rank else None
    axes = draw(st.lists(st.integers(0, rank - 1), unique=True, max_size=rank)) if rank else []
    return draw(st.sampled_from([None, tuple(axes), *(axes[:1] or [None])]))


@pytest.mark.parametrize("op", REDUCTIONS, ids=lambda o: o.name)
@settings(max_examples=30, deadline=None)
@given(data=st.data(), dtype=st.sampled_from(DTYPES),
       shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3),
       keepdims=st.booleans())
def test_infer_matches_kernel(op, data, dtype, shape, keepdims):
    axis = random_axis(data.draw, len(shape), op.name.startswith("arg"))
    x = np.random.default_rng(0).integers(0, 3, shape).astype(dtype)
    attrs = op.full_attrs({"axis": axis, "keepdims": keepdims})
    assert op.infer(type_of(x), **attrs) == type_of(op.kernel(x, **attrs))


@pytest.mark.parametrize("dtype, name, expected", [
    (np.int32, "sum", np.int64), (np.bool_, "sum", np.int64), (np.uint8, "sum", np.uint64),
    (np.int32, "mean", np.float64), (np.float32, "sum", np.float32),
    (np.float32, "mean", np.float32), (np.float16, "mean", np.float16),
    (np.int8, "prod", np.int64), (np.int8, "reduce_max", np.int8),
    (np.float32, "argmax", np.int64), (np.float32, "all", np.bool_)])
def test_numpy_dtype_rules(dtype, name, expected):
    t = Tensor((2, 3), dtype)
    op = registry.OPS[name]
    assert op.infer(t, **op.full_attrs({"axis": 1})).dtype == expected
    assert op(np.ones((2, 3), dtype), axis=1).dtype == expected


def test_symbolic_dims():
    t = Tensor(("B", 3, "T"), np.float32)
    assert rd.mean.infer(t, axis=(1, 2), keepdims=False, dtype=None) == Tensor(("B",), np.float32)
    assert rd.reduce_max.infer(t, axis=0, keepdims=True) == Tensor((1, 3, "T"), np.float32)
    assert rd.argmax.infer(t, axis=None, keepdims=False, dtype=None) == Tensor((), np.int64)


def test_errors_name_the_op_and_shape():
    t = Tensor((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"sum: axis 2 is out of range for f32\[2,3\]"):
        rd.sum_.infer(t, axis=2, keepdims=False, dtype=None)
    with pytest.raises(ValueError, match="repeated axis"):
        rd.sum_.infer(t, axis=(1, -1), keepdims=False, dtype=None)
    with pytest.raises(TypeError, match="argmax: axis must be an int"):
        rd.argmax.infer(t, axis=(0, 1), keepdims=False, dtype=None)
    with pytest.raises(ValueError, match="reduce_max: cannot reduce a zero-size axis"):
        rd.reduce_max.infer(Tensor((0, 3), np.float32), axis=0, keepdims=False)
    with pytest.raises(ValueError, match=r"mean: axis 5 is out of range for f32\[2,3\]"):
        ops.reduce_mean(np.ones((2, 3), np.float32), 5)
    with pytest.raises(TypeError, match="amax"):
        ops.amax(np.ones(3), 0, False, 1)


# ---- spellings --------------------------------------------------------------------------------

def test_mindspore_empty_axis_means_every_axis_and_numpy_means_none():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert ops.reduce_sum(x, ()) == x.sum()
    assert ops.ReduceSum()(x, ()) == x.sum()
    np.testing.assert_array_equal(registry.NUMPY["sum"](x, axis=()), x)
    np.testing.assert_array_equal(ops.reduce_max(x, [0, 1]), x.max())


def test_each_spelling_style():
    x = np.random.default_rng(5).normal(size=(2, 3, 4, 5)).astype(np.float32)
    want = x.mean(axis=(2, 3), keepdims=True)
    for got in (ops.reduce_mean(x, (2, 3), keep_dims=True),
                ops.ReduceMean(keep_dims=True)(x, (2, 3)),
                ops.mean(x, (2, 3), True),
                registry.NUMPY["mean"](x, axis=(2, 3), keepdims=True),
                registry.METHODS["mean"](x, (2, 3), keepdims=True)):
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_array_equal(ops.sum(x, dim=1, keepdim=True), x.sum(1, keepdims=True))
    np.testing.assert_array_equal(registry.METHODS["max"](x, 0), x.max(0))
    np.testing.assert_array_equal(registry.NUMPY["amin"](x, 3), x.min(3))
    np.testing.assert_array_equal(ops.ReduceProd()(x, 1), x.prod(1))
    np.testing.assert_array_equal(ops.ReduceAll(True)(x > 0, 0), (x > 0).all(0, keepdims=True))
    assert ops.any(x > 0) == (x > 0).any()
    argmax = ops.Argmax()(x)
    assert argmax.dtype == np.int32
    np.testing.assert_array_equal(argmax, x.argmax(-1))
    np.testing.assert_array_equal(ops.Argmin(axis=1)(x), x.argmin(1))
    np.testing.assert_array_equal(ops.argmax(x, 2), x.argmax(2))
    np.testing.assert_array_equal(registry.METHODS["argmin"](x, keepdims=True), x.argmin(
        keepdims=True))
    with pytest.raises(TypeError, match="out="):
        registry.NUMPY["sum"](x, 0, None, np.empty(3))


def test_emit_names_only_non_default_attrs():
    assert rd.sum_.template(rd.sum_.full_attrs({})) == "np.sum(x)"
    assert rd.sum_.template(rd.sum_.full_attrs({"axis": 1, "keepdims": True})) == \
        "np.sum(x, axis=axis, keepdims=keepdims)"
    assert rd.argmax.template(rd.argmax.full_attrs({"dtype": np.dtype(np.int32)})) == \
        "np.argmax(x).astype(dtype)"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_sum_keeping_a_short_last_axis_is_a_vector_matrix_product(dtype):
    """`x.sum(axis=(0, 1, 2))` over many rows of a few columns (a bias gradient over NHWC
    images) compiles to `np.ones(rows) @ x.reshape(rows, c)`, static or symbolic rows; equal
    to eager within rounding, NaN and infinities carried; other sums keep `x.sum(...)`."""
    import amber

    def bias_grad(x, y):
        return x.sum(axis=(0, 1, 2)), y.sum(axis=(0, 1)), x.sum(axis=(0, 1, 2), keepdims=True)

    rng = np.random.default_rng(0)
    for dynamic in (None, {"x": 0}):
        fast = amber.jit(bias_grad, dynamic=dynamic)
        for batch in (2, 5):
            x = rng.standard_normal((batch, 24, 25, 7)).astype(dtype)
            y = rng.standard_normal((3, 5, 4)).astype(dtype)
            x[1, 2, 3, 4], x[0, 0, 0, 5] = np.nan, np.inf
            for got, want in zip(fast(x, y), bias_grad(x, y)):
                assert got.dtype == want.dtype and got.shape == want.shape
                tol = 1e-4 if dtype == np.float32 else 1e-12  # NOTE: 1200 terms a column
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10)
        code = fast.code
        assert code.count("np.ones(") == 1 and "@ x.reshape(" in code
        assert "y.sum(axis=(0, 1))" in code and "keepdims=True" in code


def test_all_and_any_of_one_bool_are_the_value():
    """all/any over a rank-0 bool (a finite-loss check) compile to `np.bool_(x)`: the same value
    and kind as eager's `.all()`/`.any()`, from a NumPy scalar and from a 0-d array; reductions
    of other ranks, or keeping dims, keep the method."""
    import amber

    def truths(x, v):
        b = x > 0
        return b.all(), b.any(), np.isnan(x).any(), (v > 0).all(), b.all(keepdims=True)

    fast = amber.jit(truths)
    v = np.array([1.0, -1.0])
    for x in (np.float32(1.0), np.float64(-2.0), np.float64(np.nan), np.array(0.5),
              np.array(np.nan, np.float32)):
        got, want = fast(x, v), truths(x, v)
        assert [type(g) for g in got] == [type(w) for w in want]
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    assert fast.code.count("np.bool_(") == 3 and ".all(keepdims=True)" in fast.code
