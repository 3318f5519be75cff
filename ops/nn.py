"""Neural-network ops on whole arrays: matmul, dot and dense, dropout (and the mask it draws),
embedding, gather, and the in-place `assign` (moving statistics), `assign_add` and `assign_sub`
(optimizer updates).

Convolution and pooling are in `window.py`, normalization in `normalization.py`, softmax and the
losses in `losses.py`; their kernels live in `nn_kernels.py`.
"""
from __future__ import annotations

import functools
from typing import Any, Mapping

import numpy as np

from . import onnx as ox
from . import native
from .batch_rules import LOOP_EFFECT, dot_batch, gather_batch, whole_batch
from .batching import first_only_batch, matmul_batch
from .blas import HELPERS as _BLAS_HELPERS, subtract_product_kernel
from .elementwise import helper_call, optional, unsupported
from .nn_kernels import (assign_add_kernel, assign_kernel, assign_sub_kernel,
                         dropout_kernel, embedding_kernel)
from .opdef import NO_GRAD, REQUIRED, Dyn, GradContext, OpDef, OpFunction, Primitive
from .types import (AnyType, Scalar, Tensor, Type, broadcast_shapes, check_axis, expect_integer,
                    expect_tensor, may_equal, result_dtype)


def _matmul_infer(x: Type, y: Type, *, transpose_a: bool = False,
                  transpose_b: bool = False, turned: bool = False) -> Tensor:
    for role, t, flip in (("x", x, transpose_a), ("y", y, transpose_b)):
        expect_tensor("matmul", role, t, min_rank=2 if flip or turned else 1)
    if turned and (x.rank != 2 or y.rank != 2):
        raise ValueError(f"matmul: turned=True takes 2-d operands, not {x} @ {y}")
    a = x.shape[:-2] + x.shape[:-3:-1] if transpose_a else x.shape
    b = y.shape[:-2] + y.shape[:-3:-1] if transpose_b else y.shape
    inner_b = b[0] if len(b) == 1 else b[-2]
    if not may_equal(a[-1], inner_b):
        raise ValueError(f"matmul: inner dimensions differ ({a[-1]} vs {inner_b}): {x} @ {y}"
                         + (f" (transpose_a={transpose_a}, transpose_b={transpose_b})"
                            if transpose_a or transpose_b else ""))
    try:
        batch = broadcast_shapes(a[:-2], b[:-2])
    except ValueError:
        raise ValueError(f"matmul: batch dimensions of {x} and {y} do not broadcast") from None
    shape = batch + a[-2:-1] + (b[-1:] if len(b) > 1 else ())
    return Tensor(shape, result_dtype(x, y))


def _matmul_kernel(x: np.ndarray, y: np.ndarray, *, transpose_a: bool = False,
                   transpose_b: bool = False, turned: bool = False) -> np.ndarray:
    if turned:  # NOTE: (a @ b).T is b.T @ a.T (see graph/passes/orient_products.py)
        return np.matmul(y if transpose_b else y.T, x if transpose_a else x.T).T
    return np.matmul(np.swapaxes(x, -1, -2) if transpose_a else x,
                     np.swapaxes(y, -1, -2) if transpose_b else y)


def _matmul_operands(attrs: Mapping[str, Any]) -> tuple[str, str]:
    """The two operands as generated code spells them, transposed where the attributes say;
    turned, those of the transposed product (b.T, a.T: 2-d operands)."""
    if attrs.get("turned"):
        return ("y" if attrs.get("transpose_b") else "y.T",
                "x" if attrs.get("transpose_a") else "x.T")
    return ("np.swapaxes(x, -1, -2)" if attrs.get("transpose_a") else "x",
            "np.swapaxes(y, -1, -2)" if attrs.get("transpose_b") else "y")


def _matmul_emit(attrs: Mapping[str, Any]) -> str:
    a, b = _matmul_operands(attrs)
    return f"np.matmul({a}, {b}).T" if attrs.get("turned") else f"{a} @ {b}"


def _matmul_into(attrs: Mapping[str, Any]) -> str:
    a, b = _matmul_operands(attrs)
    if attrs.get("turned"):  # NOTE: `out` is Fortran-ordered (`into_order`): out.T is C-ordered
        return f"np.matmul({a}, {b}, out=out.T).T"
    return f"np.matmul({a}, {b}, out=out)"


def _matmul_grad(ad: GradContext) -> tuple[Any, ...]:
    """out = A @ B with A, B the (transposed) operands; 1-d operands get a unit axis so the
    2-d formulas dA = g @ B^T, dB = A^T @ g apply, and lose it again."""
    x, y, g = ad.input(0), ad.input(1), ad.g
    ta, tb = ad.attrs.get("transpose_a", False), ad.attrs.get("transpose_b", False)
    xr, yr = ad.types[0].rank, ad.types[1].rank
    if xr == 1 and yr == 1:
        return g * y, g * x
    if xr == 1:
        x, g = ad.op("expand_dims", x, axis=0), ad.op("expand_dims", g, axis=-2)
    if yr == 1:
        y, g = ad.op("expand_dims", y, axis=-1), ad.op("expand_dims", g, axis=-1)
    mm = lambda a, b, t1, t2: ad.op("matmul", a, b, transpose_a=t1, transpose_b=t2)
    if not ta:
        dx = mm(g, y, False, not tb)
    else:
        dx = mm(y, g, tb, True)
    if not tb:
        dy = mm(x, g, not ta, False)
    else:
        dy = mm(g, x, True, ta)
    if xr == 1:
        dx = ad.op("squeeze", dx, axis=-2)
    if yr == 1:
        dy = ad.op("squeeze", dy, axis=-1)
    return dx, dy


matmul = OpDef(
    "matmul", ("x", "y"), kernel=_matmul_kernel, infer=_matmul_infer, emit=_matmul_emit,
    attrs={"transpose_a": False, "transpose_b": False, "turned": False}, operator="MatMult",
    fresh=True, into=_matmul_into, into_order=lambda attrs: "F" if attrs.get("turned") else "C",
    grad=_matmul_grad, numba=native.matmul_spelling, onnx=ox.matmul, batch=matmul_batch)
"""`x @ y` with NumPy semantics (1-d operands, broadcast batches); the transposes swap the last
two axes of an operand first (MindSpore MatMul/BatchMatMul). `turned` (2-d operands, set by
`orient_products`) computes the same product as the transpose of b.T @ a.T, whose GEMM BLAS
runs faster where the result has more columns than rows."""


def _dot_infer(x: Type, y: Type) -> Tensor:
    dtype = result_dtype(x, y)  # NOTE: also rejects operands that are not tensors or scalars
    tensors = [t for t in (x, y) if isinstance(t, Tensor)]
    if len(tensors) < 2 or x.rank == 0 or y.rank == 0:  # np.dot with a scalar multiplies
        return Tensor(broadcast_shapes(*(t.shape for t in tensors)), dtype)
    inner_y = y.shape[0] if y.rank == 1 else y.shape[-2]
    if not may_equal(x.shape[-1], inner_y):
        raise ValueError(f"dot: shapes {x} and {y} are not aligned ({x.shape[-1]} vs {inner_y})")
    return Tensor(x.shape[:-1] + y.shape[:-2] + (y.shape[-1:] if y.rank > 1 else ()), dtype)


def _dot_grad(ad: GradContext) -> tuple[Any, ...]:
    if not all(1 <= t.rank <= 2 for t in ad.types if isinstance(t, Tensor)) or \
            not all(isinstance(t, Tensor) for t in ad.types):
        raise NotImplementedError("the gradient of np.dot beyond 1-d and 2-d arrays (use @)")
    return _matmul_grad(ad)


dot = OpDef("dot", ("x", "y"), kernel=np.dot, infer=_dot_infer, emit="np.dot(x, y)",
            fresh=True, grad=_dot_grad, numba=native.dot_spelling, onnx=ox.dot, batch=dot_batch)
"""`np.dot`: differs from matmul for operands above 2-d and for scalars."""


def _dense_infer(x: Type, weight: Type, *bias: Type, has_bias: bool = False) -> Tensor:
    expect_tensor("dense", "input", x, min_rank=1)
    expect_tensor("dense", "weight", weight, rank=2)
    if len(bias) != int(has_bias):
        raise ValueError(f"dense: has_bias={has_bias} but {len(bias)} bias inputs")
    if not may_equal(x.shape[-1], weight.shape[1]):
        raise ValueError(f"dense: input {x} has {x.shape[-1]} features but weight {weight} "
                         f"([out, in]) expects {weight.shape[1]}")
    shape = x.shape[:-1] + weight.shape[:1]
    for b in bias:
        expect_tensor("dense", "bias", b)
        try:
            shape = broadcast_shapes(shape, b.shape)
        except ValueError:
            raise ValueError(f"dense: bias {b} does not fit the output shape {shape}") from None
    return Tensor(shape, result_dtype(x, weight, *bias))


def _dense_kernel(x: np.ndarray, weight: np.ndarray, *bias: np.ndarray,
                  has_bias: bool = False) -> np.ndarray:
    return x @ weight.T + bias[0] if bias else x @ weight.T


def _dense_grad(ad: GradContext) -> tuple[Any, ...]:
    """out = x @ W.T + b: dx = g @ W, dW = g^T @ x over every leading axis, db = g."""
    x, w, g = ad.input(0), ad.input(1), ad.g
    out_dim, in_dim = ad.types[1].shape
    dw = None
    if ad.wants(1):
        if ad.types[0].rank == 2:
            dw = ad.op("matmul", g, x, transpose_a=True)
        else:
            flat_g = ad.op("reshape", g, shape=(-1, out_dim))
            flat_x = ad.op("reshape", x, shape=(-1, in_dim))
            dw = ad.op("matmul", flat_g, flat_x, transpose_a=True)
    return (g @ w, dw, *((g,) if len(ad.types) > 2 else ()))


dense = OpDef(
    "dense", ("x", "weight", "*bias"), kernel=_dense_kernel, infer=_dense_infer,
    emit=lambda attrs: "x @ weight.T + bias_0" if attrs.get("has_bias") else "x @ weight.T",
    attrs={"has_bias": False}, fresh=True, grad=_dense_grad, numba=native.dense_spelling,
    into=lambda attrs: None if attrs.get("has_bias") else "np.matmul(x, weight.T, out=out)",
    onnx=ox.dense, batch=first_only_batch)
"""`x @ weight.T (+ bias)` with weight [out, in]; the optional bias is the variadic input and
`has_bias` (set by the binder) says whether it is there, so the emitted code is one expression."""


def _check_probability(p: Any) -> None:
    if not isinstance(p, int | float) or not 0 <= p < 1:
        raise ValueError(f"dropout: p (the drop probability) must be in [0, 1), got {p!r}")


def _dropout_infer(x: Type, generator: Type, *, p: float, training: bool) -> Tensor:
    expect_tensor("dropout", "input", x)
    if x.dtype.kind != "f":
        raise TypeError(f"dropout: expected a float tensor, got {x}")
    if not isinstance(generator, AnyType):
        raise TypeError(f"dropout: generator must be a np.random.Generator, got {generator}")
    _check_probability(p)
    return x


_DROPOUT = {"p": 0.5, "training": True}


def _dropout_expand(ad: GradContext) -> Any:
    """Dropout as the mask it draws times the input: autodiff needs the mask. The same draw
    and the same arithmetic as the kernel, so the result is bit-identical."""
    p, training = ad.attrs["p"], ad.attrs["training"]
    if not training or p == 0:
        return ad.input(0)
    mask = ad.op("dropout_mask", ad.input(0), ad.input(1), p=p)
    return ad.input(0) * mask * (1.0 / (1.0 - p))


# NOTE: `fresh` (the result shares memory with no input) lets memory planning reuse an output
# buffer in place; dropout, embedding and assign may hand back an input and are not fresh.
dropout = OpDef(
    "dropout", ("x", "generator"), kernel=dropout_kernel, infer=_dropout_infer,
    emit=helper_call(dropout_kernel, "x, generator", _DROPOUT), attrs=_DROPOUT,
    helpers=(dropout_kernel,), effects=True, expand=_dropout_expand, onnx=ox.dropout,
    batch=LOOP_EFFECT)
"""Draws from the run-time `generator` (IR type any); effectful, so never folded or merged.
Differentiated through its expansion (the mask times the input)."""


def _dropout_mask_infer(x: Type, generator: Type, *, p: float) -> Tensor:
    _dropout_infer(x, generator, p=p, training=True)
    return Tensor(x.shape, np.dtype(np.bool_))


dropout_mask = OpDef(
    "dropout_mask", ("x", "generator"), kernel=lambda x, generator, p: generator.random(
        x.shape) >= p, infer=_dropout_mask_infer, emit="generator.random(x.shape) >= p",
    attrs={"p": 0.5}, effects=True, grad=NO_GRAD, batch=LOOP_EFFECT)
"""The keep mask dropout draws for `x` (one `generator.random(x.shape)` draw, as dropout's)."""


def _embedding_infer(ids: Type, table: Type) -> Tensor:
    expect_integer("embedding", "ids", ids)
    expect_tensor("embedding", "table", table, min_rank=1)
    shape = ids.shape if isinstance(ids, Tensor) else ()
    return Tensor(shape + table.shape[1:], table.dtype)


def _embedding_grad(ad: GradContext) -> tuple[Any, ...]:
    """Each looked-up row's adjoint goes back to its row (repeated ids add up)."""
    return None, ad.op("index_add", ad.input(1), ad.g, ad.input(0), index=(Dyn(0),))


embedding = OpDef(
    "embedding", ("ids", "table"), kernel=embedding_kernel, infer=_embedding_infer,
    emit="embedding_kernel(ids, table)", helpers=(embedding_kernel,), can_raise=True,
    grad=_embedding_grad, onnx=ox.embedding, batch=whole_batch)
"""`table[ids]`; not `fresh`: a Python int id gives a view of one row."""


def _take(params: np.ndarray, indices: np.ndarray, *, axis: int) -> np.ndarray:
    return np.take(params, indices, axis=axis)


def _gather_infer(params: Type, indices: Type, *, axis: int) -> Tensor:
    expect_tensor("gather", "params", params, min_rank=1)
    expect_integer("gather", "indices", indices)
    a = check_axis("gather", axis, params.rank)
    shape = indices.shape if isinstance(indices, Tensor) else ()
    return Tensor(params.shape[:a] + shape + params.shape[a + 1:], params.dtype)


def _gather_grad(ad: GradContext) -> tuple[Any, ...]:
    axis = ad.attrs["axis"] % ad.types[0].rank
    index = (slice(None),) * axis + (Dyn(0),)
    return ad.op("index_add", ad.input(0), ad.g, ad.input(1), index=index), None


gather = OpDef(
    "gather", ("params", "indices"), kernel=_take, infer=_gather_infer,
    emit="np.take(params, indices, axis=axis)", attrs={"axis": REQUIRED}, can_raise=True,
    fresh=True, grad=_gather_grad, onnx=ox.gather, batch=gather_batch)
"""`np.take(params, indices, axis=axis)` (MindSpore Gather)."""


def _assign_infer(param: Type, value: Type, op: str = "assign") -> Tensor:
    expect_tensor(op, "param", param)
    if not isinstance(value, Tensor | Scalar):
        raise TypeError(f"{op}: value must be a tensor or a Python scalar, got {value}")
    shape = value.shape if isinstance(value, Tensor) else ()
    while len(shape) > param.rank and shape[0] == 1:
        shape = shape[1:]  # NOTE: leading 1s are dropped, as `param[...] = value` does
    try:
        fits = broadcast_shapes(param.shape, shape) == param.shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{op}: value {value} does not broadcast to param {param}")
    if isinstance(value, Tensor) and not np.can_cast(value.dtype, param.dtype, "same_kind"):
        raise TypeError(f"{op}: cannot write {value} into param {param}")
    return param


assign = OpDef(
    "assign", ("param", "value"), kernel=assign_kernel, infer=_assign_infer,
    emit="assign_kernel(param, value)", helpers=(assign_kernel,), effects=True, writes=0,
    same_object=True, grad=NO_GRAD, batch=LOOP_EFFECT)
"""Writes `value` into the array `param` in place (moving statistics) and returns `param`."""

assign_add = OpDef(
    "assign_add", ("param", "value"), kernel=assign_add_kernel,
    infer=functools.partial(_assign_infer, op="assign_add"),
    emit="np.add(param, value, out=param)", effects=True, writes=0, same_object=True,
    grad=NO_GRAD, batch=LOOP_EFFECT)
"""`param += value` in place (MindSpore AssignAdd): an optimizer's update, no temporary."""

assign_sub = OpDef(
    "assign_sub", ("param", "value"), kernel=assign_sub_kernel,
    infer=functools.partial(_assign_infer, op="assign_sub"),
    emit="np.subtract(param, value, out=param)", effects=True, writes=0, same_object=True,
    grad=NO_GRAD, batch=LOOP_EFFECT)
"""`param -= value` in place (MindSpore AssignSub)."""


def _assign_sub_product_infer(param: Type, a: Type, b: Type, *, transpose_a: bool = False,
                              transpose_b: bool = False) -> Tensor:
    product = _matmul_infer(a, b, transpose_a=transpose_a, transpose_b=transpose_b)
    if not (param.rank == a.rank == b.rank == 2 and product == param and
            param.dtype in (np.float32, np.float64) and a.dtype == b.dtype == param.dtype):
        raise ValueError(f"assign_sub_product: param {param} -= {a} @ {b} needs 2-D operands "
                         f"of param's float dtype and a product of its shape")
    return param


_TRANSPOSES = {"transpose_a": False, "transpose_b": False}

assign_sub_product = OpDef(
    "assign_sub_product", ("param", "a", "b"), kernel=subtract_product_kernel,
    infer=_assign_sub_product_infer, attrs=_TRANSPOSES,
    emit=helper_call(subtract_product_kernel, "param, a, b", _TRANSPOSES),
    helpers=_BLAS_HELPERS, effects=True, writes=0, same_object=True, grad=NO_GRAD,
    batch=LOOP_EFFECT)
"""`param -= a @ b` in place, as one GEMM adding into `param` (ops/blas.py): an optimizer's
update of a weight whose gradient is a product, made by the `update_in_gemm` pass."""


def _bind_dense(input: Any, weight: Any, bias: Any = None):
    return (input, weight, *optional(bias)), {"has_bias": bias is not None}


def _bind_dropout(input: Any, generator: Any, p: float = 0.5, training: bool = True, *,
                  keep_prob: float | None = None):
    p = 1.0 - keep_prob if keep_prob is not None else p
    _check_probability(p)
    return (input, generator), {"p": p, "training": training}


def _bind_gather(input_params: Any, input_indices: Any, axis: int, batch_dims: int = 0):
    unsupported("gather", batch_dims=batch_dims)
    return (input_params, input_indices), {"axis": axis}


def _pair_binder(x: Any, y: Any):
    return (x, y), {}


class MatMul(Primitive):
    """`ops.MatMul(transpose_a=False, transpose_b=False)(a, b)`."""
    op = matmul

    def __init__(self, transpose_a: bool = False, transpose_b: bool = False) -> None:
        self.transpose_a, self.transpose_b = transpose_a, transpose_b

    def binder(self, x: Any, y: Any):
        return (x, y), {"transpose_a": self.transpose_a, "transpose_b": self.transpose_b}


class BatchMatMul(Primitive):
    """`ops.BatchMatMul(transpose_a=False, transpose_b=False)(x, y)`: matmul over a batch."""
    op = matmul
    __init__ = MatMul.__init__
    binder = MatMul.binder


class Gather(Primitive):
    """`ops.Gather(batch_dims=0)(params, indices, axis)`; `axis` must be a constant int."""
    op = gather

    def __init__(self, batch_dims: int = 0) -> None:
        unsupported("Gather", batch_dims=batch_dims)

    def binder(self, params: Any, indices: Any, axis: int):
        return (params, indices), {"axis": axis}


class Assign(Primitive):
    """`ops.Assign()(variable, value)`."""
    op = assign

    def binder(self, variable: Any, value: Any):
        return (variable, value), {}


class AssignAdd(Primitive):
    """`ops.AssignAdd()(variable, value)`: `variable += value` in place."""
    op = assign_add
    binder = Assign.binder


class AssignSub(Primitive):
    """`ops.AssignSub()(variable, value)`: `variable -= value` in place."""
    op = assign_sub
    binder = Assign.binder


OPS = (matmul, dot, dense, dropout, dropout_mask, embedding, gather, assign, assign_add,
       assign_sub, assign_sub_product)
FUNCTIONS = (
    OpFunction("matmul", matmul, _pair_binder),
    OpFunction("bmm", matmul, lambda input_x, mat2: ((input_x, mat2), {})),
    OpFunction("dense", dense, _bind_dense),
    OpFunction("dropout", dropout, _bind_dropout),
    OpFunction("embedding", embedding, lambda input, weight: ((input, weight), {})),
    OpFunction("gather", gather, _bind_gather),
    OpFunction("assign", assign, lambda variable, value: ((variable, value), {})),
    OpFunction("assign_add", assign_add, lambda variable, value: ((variable, value), {})),
    OpFunction("assign_sub", assign_sub, lambda variable, value: ((variable, value), {})),
)
NUMPY = (OpFunction("matmul", matmul, _pair_binder), OpFunction("dot", dot, _pair_binder))
METHODS = (OpFunction("dot", dot, _pair_binder),)
PRIMITIVES = (MatMul, BatchMatMul, Gather, Assign, AssignAdd, AssignSub)
