"""Softmax, log-softmax and the losses: softmax cross entropy (dense or sparse labels), negative
log likelihood and mean squared error, with MindSpore's reductions ('none', 'mean', 'sum')."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import onnx as ox
from .batch_rules import LOOP_PYTHON, mse_loss_batch, nll_loss_batch
from .elementwise import helper_call, optional, unsupported
from .nn_kernels import (check_class_ids, label_index, log_softmax_kernel, mean_all,
                         nll_loss_kernel, pick_labels, softmax_cross_entropy_grad_kernel,
                         softmax_cross_entropy_kernel, softmax_cross_entropy_with_grad_kernel,
                         softmax_kernel)
from .batching import axis_batch, broadcast_like, per_sample_axes
from .opdef import BatchContext, Dyn, GradContext, OpDef, OpFunction, Primitive
from .types import (UNKNOWN, Dim, Scalar, Tensor, TupleType, Type, broadcast_shapes, check_axis,
                    dim_mul, expect_integer, expect_tensor, float_dtype, may_equal,
                    mean_dtype, result_dtype)


REDUCTIONS = ("none", "mean", "sum")


def check_reduction(op: str, reduction: str) -> None:
    if reduction not in REDUCTIONS:
        raise ValueError(f"{op}: reduction must be one of {REDUCTIONS}, got {reduction!r}")


def reduced(shape: tuple[Dim, ...], dtype: np.dtype, reduction: str) -> Tensor:
    return Tensor(shape if reduction == "none" else (), dtype)


def _softmax_infer(op: str):
    def infer(x: Type, *, axis: int | tuple[int, ...]) -> Tensor:
        expect_tensor(op, "input", x, min_rank=1)
        for a in axis if isinstance(axis, tuple) else (axis,):
            check_axis(op, a, x.rank)
        return Tensor(x.shape, float_dtype(op, x))
    return infer


def _softmax_grad(ad: GradContext) -> tuple[Any, ...]:
    y, g = ad.out, ad.g
    return y * (g - ad.op("sum", g * y, axis=ad.attrs["axis"], keepdims=True)),


softmax = OpDef(
    "softmax", ("x",), kernel=softmax_kernel, infer=_softmax_infer("softmax"),
    emit=helper_call(softmax_kernel, "x", {"axis": -1}), attrs={"axis": -1},
    helpers=(softmax_kernel,), fresh=True, grad=_softmax_grad, onnx=ox.softmax("Softmax"),
    batch=axis_batch)
"""Softmax along `axis` (an int or a tuple)."""


def _log_softmax_grad(ad: GradContext) -> tuple[Any, ...]:
    g = ad.g
    total = ad.op("sum", g, axis=ad.attrs["axis"], keepdims=True)
    return g - ad.op("exp", ad.out) * total,


log_softmax = OpDef(
    "log_softmax", ("x",), kernel=log_softmax_kernel, infer=_softmax_infer("log_softmax"),
    emit=helper_call(log_softmax_kernel, "x", {"axis": -1}), attrs={"axis": -1},
    helpers=(log_softmax_kernel,), fresh=True, grad=_log_softmax_grad,
    onnx=ox.softmax("LogSoftmax"), batch=axis_batch)
"""Log-softmax along `axis` (an int or a tuple)."""


def _per_sample(ad: GradContext, g: Any, batch: tuple[Dim, ...]) -> Any:
    """The adjoint of each sample's loss (before a 'mean' or 'sum' reduction)."""
    reduction = ad.attrs["reduction"]
    if reduction == "none":
        return g
    if reduction == "sum":
        return g
    count = dim_mul(*batch)
    if isinstance(count, int):
        return g / max(count, 1)
    if count == UNKNOWN:
        raise NotImplementedError("the gradient of a mean loss over a run-time batch size")
    return g / ad.op("maximum", ad.op("dim", value=count), 1)  # NOTE: a symbolic batch


_XENT = {"sparse": False, "reduction": "none"}


def _softmax_cross_entropy_infer(logits: Type, labels: Type, *, sparse: bool,
                                 reduction: str) -> Tensor:
    op = "softmax_cross_entropy"
    check_reduction(op, reduction)
    expect_tensor(op, "logits", logits, min_rank=1)
    dtype = float_dtype(op, logits)
    expected = logits.shape[:-1] if sparse else logits.shape
    got = expect_tensor(op, "labels", labels).shape
    if len(got) != len(expected) or not all(map(may_equal, got, expected)):
        kind = "class ids" if sparse else "one-hot/probabilities"
        raise ValueError(f"{op}: labels {labels} ({kind}) must have shape {expected} for logits "
                         f"{logits} (sparse={sparse})")
    if sparse:
        expect_integer(op, "sparse labels", labels)
    else:
        dtype = np.result_type(dtype, labels.dtype)
    # NOTE: the kernel broadcasts: a symbolic size of 1 on either side takes the other's
    batch = broadcast_shapes(logits.shape[:-1], got if sparse else got[:-1])
    return reduced(batch, dtype, reduction)


def _softmax_cross_entropy_batch(bc: BatchContext) -> Any:
    """Per-sample losses of the whole batch, then each example's reduction of its own."""
    axes = per_sample_axes(bc)
    if not all(bc.batched) or axes is None:
        return None
    losses = bc.apply(*bc.inputs, reduction="none")
    reduction = bc.attrs["reduction"]
    return losses if reduction == "none" or not axes else bc.op(reduction, losses, axis=axes)


def _xent_grad_batch(bc: BatchContext) -> Any:
    """The adjoint of each example's reduced loss, spread over its samples (divided by their
    count for 'mean'), then the per-sample gradient of the whole batch."""
    logits, labels, g = bc.inputs
    count = bc.types[1].shape if isinstance(bc.types[1], Tensor) else None
    if not (bc.batched[0] and bc.batched[1]) or count is None or not all(
            type(d) is int for d in count) or not isinstance(bc.types[2], Tensor):
        return None
    if bc.attrs["reduction"] != "none":
        if bc.batched[2]:
            g = bc.op("expand_dims", g, axis=tuple(range(1, len(count) + 1)))
        if bc.attrs["reduction"] == "mean":
            g = bc.op("div", g, bc.constant(max(int(np.prod(count, dtype=np.int64)), 1)))
        g = broadcast_like(bc, g, labels, len(count) + 1)
    return bc.apply(logits, labels, g, reduction="none")


def _softmax_cross_entropy_grad(ad: GradContext) -> tuple[Any, ...]:
    """d logits = (softmax(logits) * sum(labels) - labels) * g per sample (one-hot labels when
    sparse); d labels = -log_softmax(logits) * g."""
    logits = ad.input(0)
    t = ad.types[0]
    if ad.attrs["sparse"]:
        return ad.op("softmax_cross_entropy_grad", logits, ad.input(1), ad.g,
                     reduction=ad.attrs["reduction"]), None
    per = ad.op("expand_dims", _per_sample(ad, ad.g, t.shape[:-1]), axis=-1)
    probs = ad.op("softmax", logits, axis=-1)
    labels = ad.input(1)
    mass = ad.op("sum", labels, axis=-1, keepdims=True)
    dlabels = -ad.op("log_softmax", logits, axis=-1) * per if ad.wants(1) else None
    return (probs * mass - labels) * per, dlabels


softmax_cross_entropy = OpDef(
    "softmax_cross_entropy", ("logits", "labels"), kernel=softmax_cross_entropy_kernel,
    infer=_softmax_cross_entropy_infer, attrs=_XENT, can_raise=True, fresh=True,
    emit=helper_call(softmax_cross_entropy_kernel, "logits, labels", _XENT),
    helpers=(log_softmax_kernel, check_class_ids, label_index, pick_labels, mean_all,
             softmax_cross_entropy_kernel),
    grad=_softmax_cross_entropy_grad, batch=_softmax_cross_entropy_batch)
"""MindSpore SoftmaxCrossEntropyWithLogits(sparse, reduction) on logits [..., C]."""


def _xent_grad_infer(logits: Type, labels: Type, g: Type, *, reduction: str) -> Tensor:
    loss = _softmax_cross_entropy_infer(logits, labels, sparse=True, reduction=reduction)
    if isinstance(g, Scalar) and g.kind is float and not loss.shape:
        return Tensor(logits.shape, logits.dtype)
    expect_tensor("softmax_cross_entropy_grad", "g", g)
    if len(g.shape) != len(loss.shape) or not all(map(may_equal, g.shape, loss.shape)):
        raise ValueError(f"softmax_cross_entropy_grad: the loss's adjoint {g} does not match "
                         f"the loss {loss}")
    return Tensor(logits.shape, result_dtype(logits, g))


def _xent_grad_expand(ad: GradContext) -> Any:
    """The rule as simpler ops (softmax minus one-hot, times each sample's adjoint), for
    derivatives of the gradient."""
    t = ad.types[0]
    per = ad.op("expand_dims", _per_sample(ad, ad.input(2), t.shape[:-1]), axis=-1)
    one, zero = np.ones((), t.dtype), np.zeros((), t.dtype)
    hot = ad.op("one_hot", ad.input(1), one, zero, depth=t.shape[-1], axis=-1)
    return (ad.op("softmax", ad.input(0), axis=-1) - hot) * per


softmax_cross_entropy_grad = OpDef(
    "softmax_cross_entropy_grad", ("logits", "labels", "g"),
    kernel=softmax_cross_entropy_grad_kernel, infer=_xent_grad_infer,
    emit=helper_call(softmax_cross_entropy_grad_kernel, "logits, labels, g",
                     {"reduction": "none"}),
    attrs={"reduction": "none"},
    helpers=(check_class_ids, label_index, pick_labels, softmax_cross_entropy_grad_kernel),
    can_raise=True,
    fresh=True, expand=_xent_grad_expand, batch=_xent_grad_batch)
"""d softmax_cross_entropy(sparse=True) / d logits for the loss's adjoint `g`, in one kernel."""


def _xent_with_grad_infer(logits: Type, labels: Type, g: Type, *, reduction: str) -> TupleType:
    loss = _softmax_cross_entropy_infer(logits, labels, sparse=True, reduction=reduction)
    return TupleType((loss, _xent_grad_infer(logits, labels, g, reduction=reduction)))


def _xent_with_grad_expand(ad: GradContext) -> Any:
    inputs = (ad.input(0), ad.input(1))
    reduction = ad.attrs["reduction"]
    loss = ad.op("softmax_cross_entropy", *inputs, sparse=True, reduction=reduction)
    grad = ad.op("softmax_cross_entropy_grad", *inputs, ad.input(2), reduction=reduction)
    return ad.op("make_tuple", loss, grad)


softmax_cross_entropy_with_grad = OpDef(
    "softmax_cross_entropy_with_grad", ("logits", "labels", "g"),
    kernel=softmax_cross_entropy_with_grad_kernel, infer=_xent_with_grad_infer,
    emit=helper_call(softmax_cross_entropy_with_grad_kernel, "logits, labels, g",
                     {"reduction": "none"}),
    attrs={"reduction": "none"},
    helpers=(check_class_ids, label_index, pick_labels, mean_all,
             softmax_cross_entropy_with_grad_kernel), can_raise=True,
    fresh=True, expand=_xent_with_grad_expand, batch=LOOP_PYTHON)
"""(sparse softmax cross entropy, its gradient) from one softmax: what a train step needs; made
by the `fuse_loss_grad` pass from the loss and its gradient."""


_NLL = {"reduction": "mean", "ignore_index": -100}


def _nll_loss_infer(log_probs: Type, target: Type, *weight: Type, reduction: str,
                    ignore_index: int) -> Tensor:
    check_reduction("nll_loss", reduction)
    expect_tensor("nll_loss", "input", log_probs, min_rank=2)
    expect_tensor("nll_loss", "target", target)
    expect_integer("nll_loss", "target", target)
    expected = log_probs.shape[:1] + log_probs.shape[2:]
    if target.rank != len(expected) or not all(map(may_equal, target.shape, expected)):
        raise ValueError(f"nll_loss: target {target} must have shape {expected} for input "
                         f"{log_probs} (classes on axis 1)")
    for w in weight:
        classes = expect_tensor("nll_loss", "weight", w, rank=1).shape[0]
        if not may_equal(classes, log_probs.shape[1]):
            raise ValueError(f"nll_loss: weight {w} does not match the classes of {log_probs}")
    shape = broadcast_shapes(target.shape, expected)  # NOTE: as the kernel broadcasts
    return reduced(shape, result_dtype(log_probs, *weight), reduction)


def _nll_loss_grad(ad: GradContext) -> tuple[Any, ...]:
    """d log_probs = -weight[target] * g at each target class (nothing at `ignore_index`)."""
    target = ad.input(1)
    kept = target != ad.attrs["ignore_index"]
    safe = ad.op("select", kept, target, 0)
    scale = ad.op("cast", kept, dtype=ad.out_type.dtype)
    if len(ad.types) > 2:
        scale = ad.op("getitem", ad.input(2), safe, index=(Dyn(0),)) * scale
    g, mean = ad.g, ad.attrs["reduction"] == "mean"
    if mean:
        g = g / ad.op("sum", scale)
    classes = ad.types[0].shape[1]
    hot = ad.op("one_hot", safe, 1.0, 0.0, depth=classes, axis=1)
    dlog_probs = -hot * ad.op("expand_dims", scale * g, axis=1)
    if len(ad.types) < 3 or not ad.wants(2):
        return dlog_probs, None
    # d loss / d weight[c]: each kept sample of class c adds its -log_prob (and, for the mean,
    # the divisor's share)
    kept_f = ad.op("cast", kept, dtype=ad.out_type.dtype)
    picked = ad.op("sum", ad.input(0) * hot, axis=1)
    per = -picked * kept_f * g
    if mean:
        per = per - ad.out * kept_f * g
    return dlog_probs, None, ad.op("index_add", ad.input(2), per, safe, index=(Dyn(0),))


nll_loss = OpDef(
    "nll_loss", ("log_probs", "target", "*weight"), kernel=nll_loss_kernel,
    infer=_nll_loss_infer, emit=helper_call(nll_loss_kernel, "log_probs, target, *weight", _NLL),
    attrs=_NLL, helpers=(nll_loss_kernel,), can_raise=True, fresh=True, grad=_nll_loss_grad,
    batch=nll_loss_batch)
"""Negative log likelihood of log-probabilities [N, C, ...], optional class weight [C]."""


_MSE_EMIT = {"none": "np.square(x - y)", "sum": "np.sum(np.square(x - y))",
             "mean": "np.mean(np.square(x - y))"}


def _mse_loss_kernel(x: np.ndarray, y: np.ndarray, *, reduction: str = "mean") -> np.ndarray:
    d = np.square(x - y)
    return d if reduction == "none" else np.sum(d) if reduction == "sum" else np.mean(d)


def _mse_loss_infer(x: Type, y: Type, *, reduction: str) -> Tensor:
    check_reduction("mse_loss", reduction)
    expect_tensor("mse_loss", "input", x)
    try:
        shape = broadcast_shapes(x.shape, y.shape if isinstance(y, Tensor) else ())
    except ValueError:
        raise ValueError(f"mse_loss: input {x} and target {y} do not broadcast") from None
    dtype = result_dtype(x, y)
    return reduced(shape, mean_dtype(dtype) if reduction == "mean" else dtype, reduction)


def _mse_loss_grad(ad: GradContext) -> tuple[Any, ...]:
    x, y = ad.input(0), ad.input(1)
    shape = broadcast_shapes(ad.types[0].shape, getattr(ad.types[1], "shape", ()))
    d = (x - y) * 2 * _per_sample(ad, ad.g, shape)
    return d, -d


mse_loss = OpDef(
    "mse_loss", ("x", "y"), kernel=_mse_loss_kernel, infer=_mse_loss_infer,
    emit=lambda attrs: _MSE_EMIT[attrs.get("reduction", "mean")], attrs={"reduction": "mean"},
    fresh=True, grad=_mse_loss_grad, batch=mse_loss_batch)
"""Mean squared error with reduction 'none' | 'mean' | 'sum'."""


def _as_axis(axis: Any) -> int | tuple[int, ...]:
    return tuple(axis) if isinstance(axis, list | tuple) else axis


def _bind_softmax(input: Any, axis: Any = -1):
    return (input,), {"axis": _as_axis(axis)}


def _bind_log_softmax(logits: Any, axis: Any = -1):
    return (logits,), {"axis": _as_axis(axis)}


def _bind_softmax_cross_entropy(logits: Any, labels: Any, sparse: bool = False,
                                reduction: str = "none"):
    check_reduction("softmax_cross_entropy", reduction)
    return (logits, labels), {"sparse": sparse, "reduction": reduction}


def _bind_nll_loss(inputs: Any, target: Any, weight: Any = None, ignore_index: int = -100,
                   reduction: str = "mean", label_smoothing: float = 0.0):
    unsupported("nll_loss", label_smoothing=label_smoothing)
    check_reduction("nll_loss", reduction)
    return (inputs, target, *optional(weight)), {"reduction": reduction,
                                                 "ignore_index": ignore_index}


def _bind_mse_loss(input: Any, target: Any, reduction: str = "mean"):
    check_reduction("mse_loss", reduction)
    return (input, target), {"reduction": reduction}


class Softmax(Primitive):
    """`ops.Softmax(axis=-1)(x)`."""
    op = softmax

    def __init__(self, axis: Any = -1) -> None:
        self.axis = _as_axis(axis)

    def binder(self, x: Any):
        return (x,), {"axis": self.axis}


class LogSoftmax(Primitive):
    """`ops.LogSoftmax(axis=-1)(logits)`."""
    op = log_softmax
    __init__ = Softmax.__init__
    binder = Softmax.binder


OPS = (softmax, log_softmax, softmax_cross_entropy, softmax_cross_entropy_grad,
       softmax_cross_entropy_with_grad, nll_loss, mse_loss)
FUNCTIONS = (
    OpFunction("softmax", softmax, _bind_softmax),
    OpFunction("log_softmax", log_softmax, _bind_log_softmax),
    OpFunction("softmax_cross_entropy", softmax_cross_entropy, _bind_softmax_cross_entropy),
    OpFunction("nll_loss", nll_loss, _bind_nll_loss),
    OpFunction("mse_loss", mse_loss, _bind_mse_loss),
)
PRIMITIVES = (Softmax, LogSoftmax)
