"""Creation ops: NumPy vs MindSpore default dtypes, run-time dims, arange lengths against NumPy,
eye and one_hot against explicit loops, and infer against the kernel."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import amber.ops as ops
from amber.ops import Dyn, registry
from amber.ops import creation as cr
from amber.ops.types import Scalar, Tensor, TupleType, type_of

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)


def bound_infer(fn, *args, **kwargs):
    """Bind a spelling, run its kernel and its infer: (value, inferred type)."""
    inputs, attrs = fn.bind(*args, **kwargs)
    return fn.op.kernel(*inputs, **attrs), fn.op.infer(*map(type_of, inputs), **attrs)


@pytest.mark.parametrize("name, fill", [("zeros", 0), ("ones", 1)])
def test_zeros_ones_default_dtypes_per_spelling(name, fill):
    for fn, dtype in [(registry.NUMPY[name], F64), (registry.FUNCTIONS[name], F32)]:
        value, inferred = bound_infer(fn, (2, 3))
        assert value.dtype == dtype and value.tolist() == [[fill] * 3] * 2
        assert inferred == type_of(value)
    assert registry.NUMPY[name](4, np.int8).dtype == np.int8
    prim = ops.Zeros() if name == "zeros" else ops.Ones()
    assert prim((2,), np.float16).dtype == np.float16


def test_full_dtype_rules():
    assert registry.NUMPY["full"]((2,), 0.5).dtype == F64
    assert ops.full((2,), 0.5).dtype == F32  # MindSpore: a Python float fills float32
    assert ops.full((2,), 3).dtype == np.int64 and ops.full((2,), True).dtype == np.bool_
    assert ops.full((2, 2), np.float16(2)).dtype == np.float16
    assert ops.Fill()(np.int32, (2,), 7).tolist() == [7, 7]
    row = np.array([1.0, 2.0, 3.0], np.float32)
    value, inferred = bound_infer(ops.full, (2, 3), row)
    assert value.tolist() == [row.tolist()] * 2 and inferred == type_of(value)
    with pytest.raises(ValueError, match=r"full: fill value f32\[3\] does not broadcast"):
        ops.full((2, 4), row)


def test_run_time_dims():
    n = np.int64(3)  # not a Python int: a run-time dim
    inputs, attrs = ops.zeros.bind((n, 4))
    assert attrs["shape"] == (Dyn(0), 4) and inputs == (n,)
    assert cr.zeros.kernel(*inputs, **attrs).shape == (3, 4)
    assert cr.zeros.infer(Scalar(int), **attrs) == Tensor(("?", 4), F32)
    assert cr.zeros.template(attrs) == "np.zeros((dims_0, 4), dtype=dtype)"
    whole = TupleType((Scalar(int), Scalar(int)))
    assert cr.ones.infer(whole, shape=(Dyn(0),), dtype=F64) == Tensor(("?", "?"), F64)
    assert cr.full.infer(Scalar(float), Scalar(int), shape=(Dyn(0),), dtype=None) == \
        Tensor(("?",), F64)
    with pytest.raises(TypeError, match="zeros: a shape entry must be an int"):
        cr.zeros.infer(Scalar(float), shape=(Dyn(0),), dtype=F64)
    with pytest.raises(ValueError, match="zeros: negative dimensions"):
        ops.zeros((2, -1))


@settings(max_examples=30, deadline=None)
@given(dtype=st.sampled_from([None, np.int8, np.float32, np.bool_]),
       shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=3),
       src=st.sampled_from([np.int32, np.float16, np.float64]))
def test_like_ops_match_numpy(dtype, shape, src):
    x = np.ones(shape, src)
    for name, extra in [("zeros_like", ()), ("ones_like", ()), ("full_like", (2,))]:
        want = getattr(np, name)(x, *extra, dtype=dtype)
        for fn in (registry.NUMPY[name], registry.FUNCTIONS[name]):
            value, inferred = bound_infer(fn, x, *extra, dtype=dtype)
            np.testing.assert_array_equal(value, want)
            assert value.dtype == want.dtype and inferred == type_of(value)
    assert ops.ZerosLike()(x).dtype == src and ops.OnesLike()(x).sum() == x.size


@settings(max_examples=50, deadline=None)
@given(start=st.integers(-5, 5) | st.floats(-5, 5, width=16),
       stop=st.integers(-5, 9) | st.floats(-5, 9, width=16),
       step=st.sampled_from([1, 2, -1, -3, 0.5, -0.25, 0.3]),
       dtype=st.sampled_from([None, np.int32, np.float32]))
def test_arange_length_and_dtype_match_numpy(start, stop, step, dtype):
    want = np.arange(start, stop, step, dtype=dtype)
    value, inferred = bound_infer(registry.NUMPY["arange"], start, stop, step, dtype=dtype)
    np.testing.assert_array_equal(value, want)
    assert value.dtype == want.dtype and inferred == type_of(want)
    assert cr.arange.infer(Scalar(type(stop)), start=start, stop=Dyn(0), step=step,
                           dtype=dtype and np.dtype(dtype)) == Tensor(("?",), want.dtype)


def test_arange_spellings():
    assert registry.NUMPY["arange"](4).tolist() == [0, 1, 2, 3]
    assert ops.arange(4).dtype == np.int64 and ops.arange(1, 3).tolist() == [1, 2]
    assert ops.arange(0, 1, 0.25).dtype == F32  # MindSpore: float bounds make float32
    assert registry.NUMPY["arange"](0, 1, 0.25).dtype == F64
    assert cr.arange.template(cr.arange.full_attrs({"stop": 5})) == "np.arange(5)"
    assert cr.arange.template(cr.arange.full_attrs({"start": 0.0, "stop": Dyn(0)})) == \
        "np.arange(0.0, bounds_0)"
    with pytest.raises(ValueError, match="arange: step cannot be zero"):
        ops.arange(0, 3, 0)


def test_eye_against_loop():
    for n, m, k in [(3, None, 0), (2, 4, 1), (4, 2, -1), (0, 3, 0)]:
        got = registry.NUMPY["eye"](n, m, k)
        cols = n if m is None else m
        assert got.shape == (n, cols) and got.dtype == F64
        for i, j in itertools.product(range(n), range(cols)):
            assert got[i, j] == (1.0 if j - i == k else 0.0)
        assert cr.eye.infer(**cr.eye.full_attrs({"n": n, "m": m, "k": k})) == type_of(got)
    assert ops.eye(2).dtype == F32 and ops.Eye()(2, 3, np.int32).dtype == np.int32
    with pytest.raises(TypeError, match="eye: n, m and k must be ints"):
        ops.eye(2.5)


def one_hot_loop(indices, depth, on, off, axis):
    indices = np.asarray(indices)
    axis = axis % (indices.ndim + 1)
    out = np.empty(indices.shape[:axis] + (depth,) + indices.shape[axis:], np.asarray(on).dtype)
    for idx in itertools.product(*map(range, out.shape)):
        rest = idx[:axis] + idx[axis + 1:]
        out[idx] = on if indices[rest] == idx[axis] else off
    return out


@settings(max_examples=30, deadline=None)
@given(shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=3), depth=st.integers(0, 4),
       data=st.data(), on=st.sampled_from([1, 1.0, np.float32(0.9), np.int8(3)]))
def test_one_hot_against_loop(shape, depth, data, on):
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    indices = np.random.default_rng(0).integers(-1, depth + 1, shape)
    want = one_hot_loop(indices, depth, on, 0, axis)
    if type(on) is float:  # MindSpore's spellings make Python float values float32
        want = want.astype(np.float32)
    value, inferred = bound_infer(ops.one_hot, indices, depth, on, 0, axis)
    np.testing.assert_array_equal(value, want)
    assert value.dtype == want.dtype and inferred == type_of(value)
    got = ops.OneHot(axis)(indices, depth, on, np.float32(0))
    np.testing.assert_array_equal(got, want)


def test_one_hot_errors_and_symbols():
    assert cr.one_hot.infer(Tensor(("B",), np.int32), Scalar(float), Scalar(float), depth=10,
                            axis=-1) == Tensor(("B", 10), F64)
    with pytest.raises(TypeError, match="one_hot: indices must be integers"):
        ops.one_hot(np.ones(3), 4)
    with pytest.raises(ValueError, match="one_hot: axis 3 is out of range"):
        ops.one_hot(np.zeros(3, int), 4, axis=3)
