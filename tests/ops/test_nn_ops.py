"""matmul/dot/dense, dropout, embedding, gather, assign, and the nn family's codegen contract:
every emit template, run with its helpers copied by source next to `np` only, equals the kernel."""
import ast
import builtins
import inspect
import symtable
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from amber import ops
from amber.codegen.helpers import helper_source
from amber.ops import losses, nn, normalization, window

FAMILIES = (nn, window, normalization, losses)
"""The neural-network op families."""
from amber.ops.types import AnyType, Tensor, type_of

FN = {f.name: f for family in FAMILIES for f in family.FUNCTIONS}
RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def reseed():
    """Each test draws the same data whatever ran before it."""
    global RNG
    RNG = np.random.default_rng(0)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def type_or_any(value):
    return AnyType() if isinstance(value, np.random.Generator) else type_of(value)


# --- matmul, dot, dense -----------------------------------------------------------------------

@st.composite
def matmul_operands(draw):
    batch = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3))
    m, k, n = draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(1, 4))
    vec_x, vec_y = draw(st.booleans()), draw(st.booleans())
    x_shape = (k,) if vec_x else batch.input_shapes[0] + (m, k)
    y_shape = (k,) if vec_y else batch.input_shapes[1] + (k, n)
    subscripts = ("j" if vec_x else "...ij") + "," + ("j" if vec_y else "...jk") + "->" + \
        ("" if vec_x and vec_y else "...k" if vec_x else "...i" if vec_y else "...ik")
    dtype = draw(st.sampled_from([np.float32, np.float64, np.int64]))
    return rand(*x_shape).astype(dtype), rand(*y_shape).astype(dtype), subscripts


@settings(max_examples=50, deadline=None)
@given(matmul_operands())
def test_matmul_matches_einsum_and_infer(operands):
    x, y, subscripts = operands
    got = FN["matmul"](x, y)
    np.testing.assert_allclose(got, np.einsum(subscripts, x, y), rtol=1e-5, atol=1e-5)
    assert nn.matmul.infer(type_of(x), type_of(y)) == type_of(got)


def test_matmul_transposes_and_primitives():
    a, b = rand(3, 4), rand(5, 4)
    np.testing.assert_allclose(nn.MatMul(transpose_b=True)(a, b),
                               np.einsum("ij,kj->ik", a, b), rtol=1e-5)
    np.testing.assert_allclose(nn.MatMul(transpose_a=True)(a, rand(3, 2) * 0 + 1),
                               np.einsum("ji,jk->ik", a, np.ones((3, 2))), rtol=1e-5)
    x, y = rand(2, 4, 3), rand(2, 5, 4)
    got = nn.BatchMatMul(transpose_a=True, transpose_b=True)(x, y)
    np.testing.assert_allclose(got, np.einsum("bji,bkj->bik", x, y), rtol=1e-5)
    attrs = nn.BatchMatMul(True, True).bind(x, y)[1]
    assert nn.matmul.infer(type_of(x), type_of(y), **attrs) == type_of(got)


def test_matmul_infer_symbolic_and_errors():
    x, y = Tensor(("B", "?", 4), np.float32), Tensor((4, 5), np.float32)
    assert nn.matmul.infer(x, y) == Tensor(("B", "?", 5), np.float32)
    assert nn.matmul.infer(Tensor(("N", 3), np.float32), Tensor(("?", 2), np.float32)) \
        == Tensor(("N", 2), np.float32)
    with pytest.raises(ValueError, match=r"matmul: inner dimensions differ \(4 vs 3\): "
                                         r"f32\[B,\?,4\] @ f32\[3,5\]"):
        nn.matmul.infer(x, Tensor((3, 5), np.float32))
    with pytest.raises(ValueError, match="matmul: batch dimensions"):
        nn.matmul.infer(Tensor((2, 3, 4), np.float32), Tensor((3, 4, 5), np.float32))
    with pytest.raises(TypeError, match="matmul: x must be a tensor"):
        nn.matmul.infer(ops.types.Scalar(float), y)
    with pytest.raises(ValueError, match="matmul: y must have at least 2 dims"):
        nn.matmul.infer(Tensor((3, 4), np.float32), Tensor((4,), np.float32), transpose_b=True)


@pytest.mark.parametrize("x_shape, y_shape", [
    ((2, 3, 4), (5, 4, 6)), ((4,), (2, 4, 3)), ((2, 4), (4,)), ((), (3, 2)), ((3,), (3,))])
def test_dot_follows_np_dot(x_shape, y_shape):
    x, y = rand(*x_shape), rand(*y_shape)
    got = nn.METHODS[0](x, y)
    np.testing.assert_allclose(got, np.dot(x.astype(np.float64), y), rtol=1e-5, atol=1e-5)
    assert nn.dot.infer(type_of(x), type_of(y)) == type_of(got)


@pytest.mark.parametrize("x_shape", [(3,), (4, 3), (2, 4, 3)])
@pytest.mark.parametrize("bias", [False, True])
def test_dense_formula(x_shape, bias):
    x, w = rand(*x_shape), rand(5, 3)
    b = rand(5) if bias else None
    got = FN["dense"](x, w, b)
    want = np.einsum("...i,oi->...o", x, w) + (0 if b is None else b)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    inputs, attrs = FN["dense"].bind(x, w, b)
    assert attrs == {"has_bias": bias} and len(inputs) == 2 + bias
    assert nn.dense.infer(*map(type_of, inputs), **attrs) == type_of(got) == \
        Tensor(x_shape[:-1] + (5,), np.float32)
    assert nn.dense.template(attrs) == ("x @ weight.T + bias_0" if bias else "x @ weight.T")


def test_dense_errors():
    with pytest.raises(ValueError, match=r"dense: input f32\[N,4\] has 4 features but weight "
                                         r"f32\[5,3\]"):
        nn.dense.infer(Tensor(("N", 4), np.float32), Tensor((5, 3), np.float32))
    with pytest.raises(ValueError, match="dense: has_bias=True but 0 bias inputs"):
        nn.dense.infer(Tensor(("N", 3), np.float32), Tensor((5, 3), np.float32), has_bias=True)


# --- dropout ----------------------------------------------------------------------------------

def test_dropout_statistics():
    x = np.ones((400, 500), np.float32)
    y = FN["dropout"](x, np.random.default_rng(7), p=0.3)
    assert y.dtype == np.float32 and y.shape == x.shape
    dropped = np.mean(y == 0)
    assert abs(dropped - 0.3) < 0.01  # ~10 standard deviations for 200k draws
    np.testing.assert_array_equal(np.unique(y), np.array([0, 1 / 0.7], np.float32))
    assert abs(y.mean() - 1.0) < 0.015  # inverted dropout keeps the expectation


def test_dropout_is_reproducible_from_a_seed():
    x = rand(50, 20)
    a = FN["dropout"](x, np.random.default_rng(3), 0.5)
    b = FN["dropout"](x, np.random.default_rng(3), keep_prob=0.5)
    np.testing.assert_array_equal(a, b)
    gen = np.random.default_rng(3)
    first, second = FN["dropout"](x, gen), FN["dropout"](x, gen)
    np.testing.assert_array_equal(first, a)
    assert not np.array_equal(first, second)  # the generator's state moved on


def test_dropout_off_and_errors():
    x = rand(4, 4)
    assert FN["dropout"](x, np.random.default_rng(0), training=False) is x
    assert FN["dropout"](x, np.random.default_rng(0), p=0.0) is x
    assert nn.dropout.effects and not nn.dropout.can_raise
    with pytest.raises(ValueError, match=r"dropout: p .* must be in \[0, 1\)"):
        FN["dropout"].bind(x, "g", p=1.0)
    with pytest.raises(TypeError, match="dropout: generator must be a np.random.Generator"):
        nn.dropout.infer(type_of(x), type_of(x), p=0.5, training=True)
    with pytest.raises(TypeError, match="dropout: expected a float tensor"):
        nn.dropout(np.ones(3, np.int32), np.random.default_rng(0))


# --- embedding, gather, assign ----------------------------------------------------------------

def test_embedding_looks_up_rows():
    table, ids = rand(10, 4), RNG.integers(0, 10, (2, 3))
    got = FN["embedding"](ids, table)
    want = np.array([[table[ids[i, j]] for j in range(3)] for i in range(2)])
    np.testing.assert_array_equal(got, want)
    assert nn.embedding.infer(type_of(ids), type_of(table)) == type_of(got)
    assert nn.embedding.can_raise
    with pytest.raises(TypeError, match="embedding: ids must hold integers"):
        nn.embedding.infer(Tensor((2,), np.float32), type_of(table))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather_along_an_axis(axis):
    params, indices = rand(3, 5, 4), RNG.integers(0, 3, (2, 2))
    got = FN["gather"](params, indices, axis)
    moved = np.moveaxis(params, axis, 0)
    want = np.moveaxis(np.array([[moved[i] for i in row] for row in indices]), (0, 1),
                       (axis % 3, axis % 3 + 1))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(nn.Gather()(params, indices, axis), want)
    assert nn.gather.infer(type_of(params), type_of(indices), axis=axis) == type_of(got)
    with pytest.raises(ValueError, match="gather: axis 3 is out of range for a 3-d tensor"):
        nn.gather.infer(type_of(params), type_of(indices), axis=3)


def test_assign_add_and_sub_update_in_place():
    param = np.ones((2, 3), np.float32)
    out = FN["assign_add"](param, np.arange(3, dtype=np.float64))  # broadcasts, same-kind cast
    assert out is param and param.dtype == np.float32
    np.testing.assert_array_equal(param, [[1, 2, 3]] * 2)
    assert nn.AssignSub()(param, np.float32(1)) is param
    np.testing.assert_array_equal(param, [[0, 1, 2]] * 2)
    for op in (nn.assign_add, nn.assign_sub):
        assert op.effects and op.writes == 0 and op.same_object
        assert op.infer(type_of(param), Tensor((3,), np.float32)) == type_of(param)
    with pytest.raises(ValueError, match=r"assign_sub: value f32\[3,2\] does not broadcast"):
        nn.assign_sub.infer(type_of(param), Tensor((3, 2), np.float32))
    with pytest.raises(TypeError, match="assign_add: cannot write"):
        nn.assign_add.infer(Tensor((2,), np.int32), Tensor((2,), np.float32))


def test_assign_writes_in_place_and_returns_the_param():
    param = np.zeros((2, 3), np.float32)
    value = np.arange(6, dtype=np.float64).reshape(2, 3)
    out = FN["assign"](param, value)
    assert out is param and param.dtype == np.float32
    np.testing.assert_array_equal(param, value)
    nn.Assign()(param, np.array([7.0, 8.0, 9.0]))  # broadcasts
    np.testing.assert_array_equal(param, [[7, 8, 9]] * 2)
    assert nn.assign.effects
    assert nn.assign.infer(type_of(param), type_of(value)) == type_of(param)
    with pytest.raises(ValueError, match=r"assign: value f64\[3,2\] does not broadcast"):
        nn.assign.infer(type_of(param), Tensor((3, 2), np.float64))
    with pytest.raises(TypeError, match="assign: cannot write"):
        nn.assign.infer(Tensor((3,), np.int32), Tensor((3,), np.float32))


# --- the codegen contract ---------------------------------------------------------------------

def samples():
    """(op, inputs, attrs) for every nn op, bound through its public spellings."""
    x4, w4, b4 = rand(2, 4, 7, 6), rand(6, 2, 3, 3), rand(6)
    logits, ids = rand(5, 4), RNG.integers(0, 4, 5)
    gen = np.random.default_rng
    bound = [
        (FN["matmul"], (rand(2, 3, 4), rand(4, 5)), {}),
        (nn.MatMul(transpose_a=True, transpose_b=True), (rand(4, 3), rand(5, 4)), {}),
        (nn.NUMPY[1], (rand(2, 3, 4), rand(5, 4, 2)), {}),
        (FN["dense"], (rand(3, 4), rand(5, 4), rand(5)), {}),
        (FN["dense"], (rand(3, 4), rand(5, 4)), {}),
        (FN["conv2d"], (x4, w4, b4), {"stride": 2, "pad_mode": "same", "groups": 2}),
        (FN["conv2d"], (x4, w4), {"padding": (1, 0, 2, 1), "pad_mode": "pad", "groups": 2}),
        (FN["max_pool2d"], (x4, 3, 2), {"padding": 1, "dilation": 2}),
        (FN["avg_pool2d"], (x4, 3, 2), {"padding": 1, "count_include_pad": False}),
        (FN["avg_pool2d"], (x4, 2, 2), {}),
        (FN["batch_norm"], (x4, rand(4), np.abs(rand(4)), rand(4), rand(4)), {}),
        (FN["batch_norm_train"], (x4, rand(4), rand(4)), {}),
        (FN["layer_norm"], (x4, rand(7, 6), rand(7, 6)), {"begin_norm_axis": 2,
                                                         "begin_params_axis": 2}),
        (FN["l2_normalize"], (x4,), {"axis": (1, 3)}),
        (normalization.L2Normalize(axis=2, epsilon=1e-3), (x4,), {}),
        (FN["softmax"], (logits,), {}),
        (FN["log_softmax"], (x4, 1), {}),
        (FN["softmax_cross_entropy"], (logits, ids), {"sparse": True, "reduction": "mean"}),
        (FN["softmax_cross_entropy"], (logits, np.eye(4, dtype=np.float32)[ids]), {}),
        (FN["nll_loss"], (logits, ids, np.abs(rand(4))), {"reduction": "sum"}),
        (FN["nll_loss"], (logits, ids), {"reduction": "none"}),
        (FN["mse_loss"], (logits, rand(4)), {"reduction": "sum"}),
        (FN["mse_loss"], (logits, rand(4)), {}),
        (FN["dropout"], (x4, gen(5)), {"p": 0.25}),
        (FN["embedding"], (ids, rand(4, 3)), {}),
        (FN["gather"], (rand(3, 4), ids, 1), {}),
        (FN["assign"], (np.zeros(4, np.float32), rand(4)), {}),
        (FN["assign_add"], (np.ones(4, np.float32), rand(4)), {}),
        (FN["assign_sub"], (np.ones((2, 4), np.float32), rand(4)), {}),
    ]
    conv = {"stride": (2, 2), "pad_mode": "same", "groups": 2}
    pool = {"kernel_size": (3, 3), "stride": (2, 2), "padding": (1, 1, 1, 1), "pad_mode": "pad"}
    pooled = window.max_pool2d(x4, **pool)
    gradients = [  # the ops gradient rules make (no public spelling)
        (window.conv2d_grad_input, (rand(2, 6, 4, 3), w4), {"x_shape": x4.shape, **conv}),
        (window.conv2d_grad_weight, (x4, rand(2, 6, 4, 3)), {"w_shape": w4.shape, **conv}),
        (window.max_pool2d_grad, (x4, pooled, rand(*pooled.shape)), pool),
        (window.max_pool2d_pick, (x4, pooled, rand(*x4.shape)), pool),
        (window.avg_pool2d_grad, (rand(*pooled.shape),), {"x_shape": x4.shape, **pool,
                                                      "count_include_pad": False}),
        (nn.dropout_mask, (x4, gen(5)), {"p": 0.25}),
        (losses.softmax_cross_entropy_grad, (logits, ids, np.float32(0.5)),
         {"reduction": "mean"}),
        (losses.softmax_cross_entropy_grad, (logits, ids, rand(5)), {"reduction": "none"}),
        (losses.softmax_cross_entropy_with_grad, (logits, ids, np.float32(2.0)),
         {"reduction": "sum"}),
        (nn.assign_sub_product, (rand(5, 4), rand(3, 5), rand(3, 4)), {"transpose_a": True}),
    ]
    return [(f.op, *f.bind(*args, **kwargs)) for f, args, kwargs in bound] + [
        (op, args, op.full_attrs(attrs)) for op, args, attrs in gradients]


def copy(value):
    """A fresh copy (a generator restarts from the same state) so each run sees equal inputs."""
    if isinstance(value, np.random.Generator):
        clone = np.random.default_rng()
        clone.bit_generator.state = value.bit_generator.state
        return clone
    return value.copy() if isinstance(value, np.ndarray) else value


def run_emitted(op, inputs, attrs):
    """Evaluate the emit template as generated code would: helpers copied in by source as
    codegen copies them (without `from __future__ import annotations`, so annotations naming
    what the module lacks are dropped), only `np` besides, attributes as values."""
    env = {"np": np}
    for helper in op.helpers:
        exec(helper_source(helper), env)
    fixed = [name for name in op.inputs if not name.startswith("*")]
    env.update(zip(fixed, inputs))
    for name in op.inputs:
        if name.startswith("*"):
            rest = tuple(inputs[len(fixed):])
            env[name[1:]] = rest
            env.update({f"{name[1:]}_{k}": v for k, v in enumerate(rest)})
    env.update(attrs)
    tree = ast.parse(op.template(attrs), mode="eval")
    free = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert free <= set(env), f"{op.name}: template uses unknown names {free - set(env)}"
    return eval(compile(tree, f"<emit {op.name}>", "eval"), env)


def assert_same(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for u, v in zip(a, b):
            assert_same(u, v)
    else:
        assert type(a) is type(b) and np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_array_equal(a, b)


SAMPLES = samples()


@pytest.mark.parametrize("op, inputs, attrs", SAMPLES, ids=[s[0].name for s in SAMPLES])
def test_emitted_code_equals_kernel_and_infer(op, inputs, attrs):
    want = op.kernel(*map(copy, inputs), **attrs)
    assert_same(run_emitted(op, list(map(copy, inputs)), attrs), want)
    inferred = op.infer(*map(type_or_any, inputs), **attrs)
    actual = type_of(want)
    assert inferred == actual, f"{op.name}: infer {inferred} != kernel {actual}"


@pytest.mark.parametrize("op, inputs, attrs", [s for s in SAMPLES if s[0].fresh],
                         ids=[s[0].name for s in SAMPLES if s[0].fresh])
def test_fresh_results_share_memory_with_no_input(op, inputs, attrs):
    args = [copy(value) for value in inputs]
    out = op.kernel(*args, **attrs)
    for result in out if isinstance(out, tuple) else (out,):
        for value in args:
            if isinstance(value, np.ndarray):
                assert not np.shares_memory(result, value)


def test_every_op_is_sampled_and_registered():
    every = [op for family in FAMILIES for op in family.OPS]
    assert {s[0].name for s in SAMPLES} == {op.name for op in every}
    for op in every:
        assert ops.lookup(op.name) is op
    for f in nn.FUNCTIONS:
        assert getattr(ops, f.name) is f
    for prim in (p for family in FAMILIES for p in getattr(family, "PRIMITIVES", ())):
        assert getattr(ops, prim.__name__) is prim and prim.__mro__[1] is ops.Primitive
    assert ops.OPERATORS["MatMult"] is nn.matmul
    assert ops.NUMPY["matmul"].op is nn.matmul and ops.NUMPY["dot"].op is nn.dot
    assert ops.METHODS["dot"].op is nn.dot


@pytest.mark.parametrize("op", [op for family in FAMILIES for op in family.OPS if op.helpers],
                         ids=lambda op: op.name)
def test_helpers_are_self_contained_and_match_attrs(op):
    names = {h.__name__ for h in op.helpers}
    for helper in op.helpers:
        source = textwrap.dedent(inspect.getsource(helper))
        table = symtable.symtable(source, helper.__name__, "exec").get_children()[0]
        used = set(table.get_globals()) - set(dir(builtins))
        assert used <= {"np"} | names, f"{helper.__name__} uses {used - {'np'} - names}"
    if op.kernel in op.helpers:  # templates leave out attributes at their defaults
        params = inspect.signature(op.kernel).parameters.values()
        defaults = {p.name: p.default for p in params if p.kind is p.KEYWORD_ONLY}
        assert defaults.keys() == op.attrs.keys()
        for name, default in op.attrs.items():
            assert defaults[name] == default or (default is ops.REQUIRED
                                                 and defaults[name] is inspect.Parameter.empty)
