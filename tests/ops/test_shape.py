"""Shape ops and indexing: kernels against NumPy and explicit loops, infer against the kernel on
random inputs (NumPy's basic and advanced indexing rules included), symbolic dims, spellings."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import amber.ops as ops
from amber.ops import Dyn, registry
from amber.ops import indexing
from amber.ops import joining as jn
from amber.ops import shaping as sh
from amber.ops.symbolic import symbol
from amber.ops.types import ListType, Scalar, Tensor, TupleType, type_of

F32 = np.float32


def infer_of(op, *inputs, **attrs):
    return op.infer(*(type_of(v) for v in inputs), **op.full_attrs(attrs))


def matches(inferred, value):
    """`inferred` describes `value`: same dtype, and each dim equal or unknown."""
    actual = type_of(value)
    return (inferred.dtype == actual.dtype and len(inferred.shape) == len(actual.shape) and
            all(d == a or not isinstance(d, int) for d, a in zip(inferred.shape, actual.shape)))


def arr(*shape, dtype=F32):
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


# ---- reshape, transpose, axes -----------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(shape=hnp.array_shapes(min_dims=0, max_dims=4, max_side=4), data=st.data())
def test_reshape_infer_matches_kernel(shape, data):
    x = arr(*shape)
    target = list(data.draw(st.permutations(shape)))
    if target and data.draw(st.booleans()):
        target[data.draw(st.integers(0, len(target) - 1))] = -1
    target = tuple(target)
    want = np.reshape(x, target) if target.count(-1) <= 1 and (x.size or -1 not in target) \
        else None
    if want is None:
        return
    got = ops.reshape(x, target)
    np.testing.assert_array_equal(got, want)
    assert infer_of(sh.reshape, x, shape=target) == type_of(got)


def test_reshape_symbolic_dynamic_and_errors():
    t = Tensor(("B", 3, 4), F32)
    assert sh.reshape.infer(t, shape=(-1, 12)) == Tensor(("B", 12), F32)
    assert sh.reshape.infer(t, shape=(-1,)) == Tensor(("12*B",), F32)
    assert sh.reshape.infer(t, shape=(symbol("B"), -1)) == Tensor(("B", 12), F32)
    assert sh.reshape.infer(t, shape=(-1, 5)) == Tensor(("?", 5), F32)  # 12*B/5: run time
    assert sh.reshape.infer(t, Scalar(int), shape=(Dyn(0), -1)) == Tensor(("?", "?"), F32)
    dims = TupleType((Scalar(int), Scalar(int)))
    assert sh.reshape.infer(t, dims, shape=(Dyn(0),)) == Tensor(("?", "?"), F32)
    x = arr(2, 6)
    n = np.int64(3)  # not a Python int: routed as a run-time dim
    inputs, attrs = registry.METHODS["reshape"].bind(x, n, -1)
    assert attrs["shape"] == (Dyn(0), -1) and ops.reshape(x, (n, -1)).shape == (3, 4)
    assert registry.METHODS["reshape"](x, (4, 3)).shape == (4, 3)
    assert ops.Reshape()(x, (3, 2, 2)).shape == (3, 2, 2)
    with pytest.raises(ValueError, match=r"reshape: cannot reshape f32\[2,6\] \(size 12\)"):
        ops.reshape(x, (5, -1))
    with pytest.raises(ValueError, match="reshape: cannot reshape"):
        sh.reshape.infer(Tensor((2, 6), F32), shape=(7,))
    with pytest.raises(ValueError, match="bad target shape"):
        sh.reshape.infer(Tensor((2, 6), F32), shape=(-1, -1))


@settings(max_examples=30, deadline=None)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=4, max_side=3), data=st.data())
def test_transpose_matches_index_loop(shape, data):
    x = arr(*shape)
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    got = ops.transpose(x, perm)
    for idx in itertools.product(*map(range, got.shape)):
        source = [0] * len(shape)
        for out_axis, in_axis in enumerate(perm):
            source[in_axis] = idx[out_axis]
        assert got[idx] == x[tuple(source)]
    assert infer_of(sh.transpose, x, perm=perm) == type_of(got)
    assert infer_of(sh.transpose, x) == type_of(np.transpose(x))


def test_transpose_spellings_and_errors():
    x = arr(2, 3, 4)
    want = x.transpose(2, 0, 1)
    for got in (ops.Transpose()(x, (2, 0, 1)), ops.permute(x, [2, 0, 1]),
                registry.NUMPY["transpose"](x, (2, 0, 1)),
                registry.METHODS["transpose"](x, 2, 0, 1),
                registry.METHODS["transpose"](x, (2, 0, 1))):
        np.testing.assert_array_equal(got, want)
    assert registry.METHODS["transpose"](x).shape == (4, 3, 2)
    with pytest.raises(ValueError, match=r"transpose: perm \(0, 0, 1\) is not a permutation"):
        ops.transpose(x, (0, 0, 1))
    assert sh.transpose.infer(Tensor(("B", 3), F32), perm=(1, 0)) == Tensor((3, "B"), F32)


def test_expand_dims_squeeze():
    x = arr(2, 1, 3)
    for axis in (0, -1, (0, 2), 3):
        got = ops.expand_dims(x, axis)
        np.testing.assert_array_equal(got, np.expand_dims(x, axis))
        assert infer_of(sh.expand_dims, x, axis=axis) == type_of(got)
    assert ops.unsqueeze(x, dim=1).shape == (2, 1, 1, 3)
    assert ops.ExpandDims()(x, 0).shape == (1, 2, 1, 3)
    for axis in (None, 1, (1,), -2):
        got = registry.NUMPY["squeeze"](x, axis)
        np.testing.assert_array_equal(got, np.squeeze(x, axis))
        assert infer_of(sh.squeeze, x, axis=axis) == type_of(got)
    assert ops.squeeze(arr(1, 3, 1), ()).shape == (3,)
    assert ops.Squeeze()(arr(1, 3, 1)).shape == (3,) and ops.Squeeze(0)(arr(1, 3)).shape == (3,)
    assert sh.squeeze.infer(Tensor(("B", 1), F32), axis=1) == Tensor(("B",), F32)
    with pytest.raises(ValueError, match="squeeze: cannot tell"):
        sh.squeeze.infer(Tensor(("B", 1), F32), axis=None)
    with pytest.raises(ValueError, match=r"squeeze: axis 0 of f32\[2,1,3\] does not have size 1"):
        ops.squeeze(x, 0)
    with pytest.raises(ValueError, match="expand_dims: axis 4 is out of range"):
        ops.expand_dims(x, 4)


def test_flatten_mindspore_keeps_batch_and_method_flattens_all():
    x = arr(2, 3, 4, 5)
    for got in (ops.flatten(x), ops.Flatten()(x)):
        assert got.shape == (2, 60)
        for n in range(2):
            assert got[n].tolist() == [x[n, c, h, w] for c in range(3) for h in range(4)
                                       for w in range(5)]
    flat = registry.METHODS["flatten"](x)
    assert flat.shape == (120,) and flat.tolist() == list(range(120))
    flat[0] = -1
    assert x[0, 0, 0, 0] == 0  # a copy, as ndarray.flatten() makes
    assert ops.flatten(x, start_dim=1, end_dim=2).shape == (2, 12, 5)
    assert ops.flatten(arr(4)).shape == (4, 1)
    for start, end in [(0, -1), (1, -1), (1, 2), (0, 1), (2, -2), (-3, -1)]:
        assert infer_of(sh.flatten, x, start_dim=start, end_dim=end) == \
            type_of(sh.flatten(x, start_dim=start, end_dim=end))
    assert sh.flatten.infer(Tensor(("B", 3, 4), F32), start_dim=1, end_dim=-1) == \
        Tensor(("B", 12), F32)
    with pytest.raises(ValueError, match="flatten"):
        ops.flatten(np.float32(1.0))


# ---- sequences of tensors ---------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=3), n=st.integers(1, 3),
       data=st.data(), dtypes=st.lists(st.sampled_from([np.int32, F32, np.float64]), min_size=3,
                                       max_size=3))
def test_concat_and_stack_infer_match_kernel(shape, n, data, dtypes):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    xs = tuple(np.ones(shape[:axis % len(shape)] + (k + 1,) + shape[axis % len(shape) + 1:],
                       dtypes[k]) for k in range(n))
    got = ops.concat(xs, axis)
    np.testing.assert_array_equal(got, np.concatenate(xs, axis))
    assert infer_of(jn.concat, xs, axis=axis) == type_of(got)
    same = tuple(np.ones(shape, d) for d in dtypes[:n])
    stacked = ops.stack(list(same), axis)
    np.testing.assert_array_equal(stacked, np.stack(same, axis))
    assert infer_of(jn.stack, same, axis=axis) == type_of(stacked)


def test_concat_stack_lists_symbols_and_errors():
    a, b = Tensor(("B", 3), F32), Tensor(("B", 5), F32)
    assert jn.concat.infer(TupleType((a, b)), axis=1) == Tensor(("B", 8), F32)
    assert jn.concat.infer(TupleType((a, a)), axis=0) == Tensor(("2*B", 3), F32)
    assert jn.concat.infer(ListType(a), axis=1) == Tensor(("B", "?"), F32)
    assert jn.stack.infer(ListType(a), axis=0) == Tensor(("?", "B", 3), F32)
    assert jn.stack.infer(TupleType((a, a)), axis=-1) == Tensor(("B", 3, 2), F32)
    x = (arr(2, 3), arr(2, 3))
    assert ops.Concat(1)(x).shape == (2, 6) and ops.cat(list(x)).shape == (4, 3)
    assert ops.Stack(axis=1)(x).shape == (2, 2, 3)
    assert registry.NUMPY["concatenate"](x, axis=-1).shape == (2, 6)
    with pytest.raises(ValueError, match=r"concat: sizes \(3, 4\) do not match"):
        ops.concat((arr(2, 3), arr(2, 4)), axis=0)
    with pytest.raises(ValueError, match="concat: axis 2 is out of range"):
        ops.concat(x, 2)
    with pytest.raises(ValueError, match="stack: sizes"):
        ops.stack((arr(2, 3), arr(3, 3)))


def test_split_spellings():
    x = arr(7, 2)
    pieces = ops.split(x, 3)  # MindSpore: chunks of 3
    assert [p.tolist() for p in pieces] == [x[0:3].tolist(), x[3:6].tolist(), x[6:].tolist()]
    assert [p.shape for p in ops.split(x, [2, 5])] == [(2, 2), (5, 2)]
    assert [p.shape for p in registry.NUMPY["split"](x, [2, 3])] == [(2, 2), (1, 2), (4, 2)]
    assert [p.shape for p in ops.Split(1, 2)(x)] == [(7, 1), (7, 1)]
    assert isinstance(ops.Split(0, 1)(x), tuple)
    for attrs in ({"sections": 7}, {"sections": (2, 9)}, {"sections": (-2,)}, {"sizes": 3},
                  {"sizes": (3, 4)}, {"sizes": 10}, {"axis": 1, "sections": 2}):
        got = jn.split(x, **attrs)
        assert infer_of(jn.split, x, **attrs) == type_of(got), attrs
    assert jn.split.infer(Tensor(("B", 4), F32), axis=0, sections=2, sizes=None) == \
        TupleType((Tensor(("B//2", 4), F32),) * 2)
    with pytest.raises(ValueError, match="split: f32\\[7,2\\] does not split into 2 equal parts"):
        registry.NUMPY["split"](x, 2)
    with pytest.raises(ValueError, match="do not add up"):
        ops.split(x, [2, 2])


# ---- tile, broadcast, pad, flip, repeat -------------------------------------------------------

@pytest.mark.parametrize("reps", [2, (2, 1), (1, 3, 2), (0, 2)])
def test_tile(reps):
    x = arr(2, 3)
    got = ops.tile(x, reps)
    np.testing.assert_array_equal(got, np.tile(x, reps))
    assert infer_of(jn.tile, x, reps=reps if isinstance(reps, tuple) else (reps,)) == \
        type_of(got)
    assert ops.Tile()(x, (2, 2)).shape == (4, 6)


def test_broadcast_to_with_minus_one_and_run_time_dims():
    x = arr(3, 1)
    got = ops.broadcast_to(x, (2, -1, 4))
    assert got.shape == (2, 3, 4) and all(got[i, j, k] == x[j, 0] for i, j, k in
                                          itertools.product(range(2), range(3), range(4)))
    assert sh.broadcast_to.template(sh.broadcast_to.full_attrs({"shape": (2, -1, 4)})) == \
        "np.broadcast_to(x, (2, x.shape[-2], 4))"
    assert infer_of(sh.broadcast_to, x, shape=(2, -1, 4)) == type_of(got)
    assert ops.BroadcastTo((5, 3, 2))(x).shape == (5, 3, 2)
    assert sh.broadcast_to.infer(Tensor(("B", 1), F32), Scalar(int), shape=(-1, Dyn(0))) == \
        Tensor(("B", "?"), F32)
    with pytest.raises(ValueError, match=r"broadcast_to: cannot broadcast f32\[3,1\]"):
        ops.broadcast_to(x, (2, 4))


def test_pad_against_explicit_border():
    x = arr(2, 3) + 1
    for got in (registry.NUMPY["pad"](x, ((1, 0), (2, 1))), ops.Pad(((1, 0), (2, 1)))(x)):
        assert got.shape == (3, 6)
        for i, j in itertools.product(range(3), range(6)):
            inside = 1 <= i and 2 <= j < 5
            assert got[i, j] == (x[i - 1, j - 2] if inside else 0)
    padded = registry.NUMPY["pad"](x, 1, constant_values=7)
    assert padded.shape == (4, 5) and padded[0, 0] == 7 and padded.dtype == F32
    for widths in (1, (1, 2), ((1, 2),), ((0, 1), (2, 0))):
        assert infer_of(jn.pad, x, paddings=widths) == type_of(np.pad(x, widths))
    with pytest.raises(ValueError, match="pad: paddings"):
        ops.Pad(((1, 1), (1, 1), (1, 1)))(x)
    for mode in ("edge", "reflect", "symmetric", "wrap"):
        np.testing.assert_array_equal(registry.NUMPY["pad"](x, ((1, 0), (2, 1)), mode=mode),
                                      np.pad(x, ((1, 0), (2, 1)), mode=mode))
        assert infer_of(jn.pad, x, paddings=((1, 0), (2, 1)), mode=mode) == type_of(
            np.pad(x, ((1, 0), (2, 1)), mode=mode))
    with pytest.raises(ValueError, match="constant_values only goes with mode='constant'"):
        registry.NUMPY["pad"](x, 1, mode="edge", constant_values=3)
    with pytest.raises(ValueError, match="mode must be one of"):
        registry.NUMPY["pad"](x, 1, mode="mirror")


def test_flip_and_repeat():
    x = arr(2, 3)
    assert ops.flip(x, (1,)).tolist() == [row[::-1] for row in x.tolist()]
    assert ops.ReverseV2((0,))(x).tolist() == x.tolist()[::-1]
    np.testing.assert_array_equal(registry.NUMPY["flip"](x), x[::-1, ::-1])
    for repeats, axis in [(2, None), (2, 1), ((1, 2), 0), ((1, 0, 2), 1), ((3,), None)]:
        got = registry.NUMPY["repeat"](x, repeats, axis)
        np.testing.assert_array_equal(got, np.repeat(x, repeats, axis))
        assert infer_of(jn.repeat, x, repeats=repeats, axis=axis) == type_of(got)
    assert registry.METHODS["repeat"](x, 2, 0).shape == (4, 3)
    assert ops.repeat_elements(x, 2).shape == (4, 3)
    with pytest.raises(ValueError, match="repeat: 2 repeats do not match 3 items"):
        ops.repeat_interleave(x, [1, 2], 1)


def shape_op_attrs(draw, name, rank):
    axis = st.integers(-rank - 1, rank)
    small = st.integers(0, 2)
    return {
        "expand_dims": lambda: {"axis": draw(axis)},
        "squeeze": lambda: {"axis": draw(st.none() | axis)},
        "flip": lambda: {"axis": draw(st.none() | axis)},
        "tile": lambda: {"reps": tuple(draw(st.lists(small, max_size=3)))},
        "pad": lambda: {"paddings": draw(small | st.tuples(small, small).map(lambda p: (p,) * rank)),
                        "value": draw(st.sampled_from([0, 1.5]))},
        "repeat": lambda: {"repeats": draw(small), "axis": draw(st.none() | axis)},
        "broadcast_to": lambda: {"shape": tuple(draw(st.lists(st.integers(-1, 3), min_size=rank,
                                                              max_size=rank + 2)))},
        "cast": lambda: {"dtype": np.dtype(draw(st.sampled_from([np.int8, np.float16, bool])))},
    }[name]()


@pytest.mark.parametrize("name", ["expand_dims", "squeeze", "flip", "tile", "pad", "repeat",
                                  "broadcast_to", "cast"])
@settings(max_examples=40, deadline=None)
@given(shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3), data=st.data())
def test_infer_matches_kernel_or_both_fail(name, shape, data):
    op = registry.OPS[name]
    x = np.ones(shape, F32)
    attrs = op.full_attrs(shape_op_attrs(data.draw, name, len(shape)))
    try:
        got = op.kernel(x, **attrs)
    except (ValueError, TypeError, IndexError):
        with pytest.raises((ValueError, TypeError, IndexError), match=name):
            op.infer(type_of(x), **attrs)
        return
    assert op.infer(type_of(x), **attrs) == type_of(got), attrs


# ---- cast and queries -------------------------------------------------------------------------

def test_cast_spellings():
    x = np.array([1.7, -0.2, 0.0], F32)
    for got in (ops.cast(x, np.int32), ops.Cast()(x, "int32"),
                registry.METHODS["astype"](x, np.int32)):
        assert got.dtype == np.int32 and got.tolist() == [int(v) for v in x.tolist()]
    assert ops.cast(x, bool).tolist() == [True, True, False]
    assert sh.cast.infer(Tensor(("B",), F32), dtype=np.dtype(np.float16)) == \
        Tensor(("B",), np.float16)
    # a Python number becomes a NumPy scalar, as np.float32(3) makes it
    assert sh.cast.infer(Scalar(int), dtype=np.dtype(F32)) == Tensor((), F32)
    assert type(ops.cast(3, F32)) is np.float32 and ops.cast(True, np.int8) == 1
    with pytest.raises(TypeError, match="cast: expected a tensor"):
        sh.cast.infer(type_of("text"), dtype=np.dtype(F32))


def test_shape_size_ndim():
    x = arr(2, 3, 4)
    # NOTE: `amber.ops.shape` is the submodule ops/shape.py; the spelling is in the registry
    assert registry.FUNCTIONS["shape"](x) == (2, 3, 4) and ops.Shape()(x) == (2, 3, 4)
    assert ops.size(x) == 24 and ops.rank(x) == 3 and registry.NUMPY["ndim"](x) == 3
    assert sh.shape_of.infer(Tensor(("B", 3), F32)) == TupleType((Scalar(int), Scalar(int)))
    assert sh.size_of.infer(Tensor(("B", 3), F32)) == Scalar(int)
    assert type_of(ops.size(x)) == Scalar(int)


# ---- getitem ----------------------------------------------------------------------------------

def index_items(draw, rank):
    """A random subscript: ints, slices, None, Ellipsis, integer arrays, boolean masks."""
    side = st.integers(-4, 4)
    item = st.one_of(
        side, st.none(), st.just(Ellipsis), st.booleans(),
        st.builds(slice, st.none() | side, st.none() | side, st.none() | st.sampled_from(
            [1, 2, -1, -2])),
        hnp.array_shapes(min_dims=1, max_dims=2, max_side=2).map(lambda s: np.zeros(s, int)),
        hnp.array_shapes(min_dims=1, max_dims=2, max_side=3).map(lambda s: np.ones(s, bool)))
    return tuple(draw(st.lists(item, max_size=rank + 1)))


@settings(max_examples=50, deadline=None)
@given(shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=4), data=st.data(),
       symbolic=st.booleans())
def test_getitem_infer_follows_numpy_indexing(shape, data, symbolic):
    x = arr(*shape)
    key = index_items(data.draw, len(shape))
    index, dyn = indexing.split_index(key)
    xt = Tensor(tuple(f"S{i}" for i in range(len(shape))), F32) if symbolic else type_of(x)
    try:
        want = x[key if len(key) != 1 else key[0]]
    except IndexError:
        masked = any(np.asarray(k).dtype == bool for k in key if k is not None)
        if not (masked or symbolic):  # without run-time counts the failure is static
            with pytest.raises(IndexError):
                indexing.getitem.infer(xt, *map(type_of, dyn), index=index)
        return
    np.testing.assert_array_equal(indexing.getitem(x, *dyn, index=index), want)
    inferred = indexing.getitem.infer(xt, *map(type_of, dyn), index=index)
    assert matches(inferred, want), (key, inferred, want.shape)
    exact = not symbolic and not any(isinstance(k, bool | np.ndarray) and
                                     np.asarray(k).dtype == bool for k in key)
    assert not exact or inferred == type_of(want)


def test_getitem_rules():
    t = Tensor((2, 3, 4, 5), F32)
    ints = Tensor((2,), np.int64)
    # advanced indices separated by a slice go first; adjacent ones stay in place
    assert indexing.getitem.infer(t, ints, index=(0, slice(None), Dyn(0))) == Tensor((2, 3, 5), F32)
    assert indexing.getitem.infer(t, ints, index=(slice(None), 0, Dyn(0))) == Tensor((2, 2, 5), F32)
    assert indexing.getitem.infer(t, Tensor((3, 4), np.bool_), index=(0, Dyn(0))) == \
        Tensor(("?", 5), F32)
    assert indexing.getitem.infer(t, Scalar(int), index=(slice(Dyn(0), None), Ellipsis, None)) == \
        Tensor(("?", 3, 4, 5, 1), F32)
    assert indexing.getitem.infer(Tensor(("B", 8), F32), index=(slice(None), slice(2, None, 3))) == \
        Tensor(("B", 2), F32)
    assert indexing.getitem.infer(Tensor(("B", 8), F32), index=(-1,)) == Tensor((8,), F32)
    idx = TupleType((Scalar(int), Scalar(int)))  # x[t] with t a run-time tuple
    assert indexing.getitem.infer(t, idx, index=(Dyn(0),)) == Tensor((4, 5), F32)
    with pytest.raises(IndexError, match=r"getitem: index 3 is out of bounds for axis 1 of"):
        indexing.getitem.infer(t, index=(0, 3))
    with pytest.raises(ValueError, match="too many indices"):
        indexing.getitem.infer(t, index=(0, 0, 0, 0, 0))
    with pytest.raises(TypeError, match="valid indices"):
        indexing.getitem.infer(t, Scalar(float), index=(Dyn(0),))
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        indexing.getitem.infer(t, index=(slice(None, None, 0),))


def test_getitem_on_lists_and_tuples():
    items = ListType(Tensor((3,), F32))
    assert indexing.getitem.infer(items, Scalar(int), index=(Dyn(0),)) == Tensor((3,), F32)
    assert indexing.getitem.infer(items, index=(slice(1, None),)) == items
    pair = TupleType((Scalar(int), Tensor((2,), F32)))
    assert indexing.getitem.infer(pair, index=(-1,)) == Tensor((2,), F32)
    assert indexing.getitem.infer(pair, index=(slice(0, 1),)) == TupleType((Scalar(int),))
    with pytest.raises(IndexError, match="tuple index 2 is out of range"):
        indexing.getitem.infer(pair, index=(2,))
    with pytest.raises(TypeError, match="not subscriptable"):
        indexing.getitem.infer(Scalar(int), index=(0,))
    values = [np.ones(3), np.zeros(3)]
    assert indexing.getitem(values, 1, index=(Dyn(0),)) is values[1]
    assert indexing.getitem(values, index=(slice(None, 1),)) == values[:1]


def test_split_index_and_emitted_text():
    n = object()
    index, dyn = indexing.split_index((0, slice(1, n), None, Ellipsis, n))
    assert index == (0, slice(1, Dyn(0)), None, Ellipsis, Dyn(1)) and dyn == (n, n)
    assert indexing.getitem.template({"index": index}) == "x[0, 1:idx_0, None, ..., idx_1]"
    assert indexing.getitem.template({"index": (slice(None, None, -1),)}) == "x[::-1]"
    assert indexing.getitem.template({"index": ()}) == "x[()]"
    assert indexing.setitem.template({"index": (slice(None), 0)}) == \
        "assign_item(x, np.s_[:, 0], value)"


# ---- setitem ----------------------------------------------------------------------------------

def test_setitem_writes_in_place_and_returns_x():
    x = np.zeros((3, 4), F32)
    index, dyn = indexing.split_index((slice(None), np.array([0, 2])))
    out = indexing.setitem(x, np.float32(5), *dyn, index=index)
    assert out is x and x[:, [0, 2]].tolist() == [[5, 5]] * 3 and x[:, 1].tolist() == [0] * 3
    indexing.setitem(x, np.arange(4, dtype=F32), index=(1,))
    assert x[1].tolist() == [0, 1, 2, 3]
    values = [1, 2]
    assert indexing.setitem(values, 9, index=(0,)) is values and values == [9, 2]


def test_setitem_infer():
    t = Tensor((3, 4), F32)
    assert indexing.setitem.infer(t, Scalar(float), index=(0,)) == t
    assert indexing.setitem.infer(t, Tensor((1, 1, 4), F32), index=(0,)) == t
    assert indexing.setitem.infer(t, Tensor((3, 1), F32), Tensor(("?",), np.bool_),
                            index=(slice(None), Dyn(0))) == t
    assert indexing.setitem.infer(ListType(Scalar(int)), Scalar(float), index=(0,)) == \
        ListType(Scalar(float))
    with pytest.raises(ValueError, match=r"setitem: cannot assign f32\[3\] to x\[0\]"):
        indexing.setitem.infer(t, Tensor((3,), F32), index=(0,))
    with pytest.raises(ValueError, match=r"setitem: cannot assign"):
        indexing.setitem(np.zeros((3, 4)), np.ones(3), index=(0,))
    assert indexing.setitem.effects and indexing.setitem.can_raise and indexing.getitem.can_raise
