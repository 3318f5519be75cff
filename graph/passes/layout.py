"""Layout transform: chains of convolutions keep their activations channels-last (NHWC).

A convolution of window rows (ops/conv_kernels.py) wants its input channels-last and makes
its output channels-last; over NCHW arrays each one copies its input into NHWC and its result
back. This pass turns each such convolution (and its two gradients) into its NHWC op
(ops/conv_nhwc.py) between two transposes, then moves the transposes down through what the
chain does between convolutions, so that pairs meet and cancel:

- `op(transpose(y))` for an elementwise op (ReLU, the residual add, the ReLU mask and its
  product in the backward) becomes `transpose(op(y, ...))`, its other 4-d operands transposed
  the other way (a view; usually one that cancels) and 0-d operands as they are;
- a sum or mean over axes of `transpose(y)` becomes the same reduction of `y` over the moved
  axes (the bias gradient `sum(axis=(0, 2, 3))`, global average pooling `mean(axis=(2, 3))`);
- `transpose(transpose(y))` that restores `y`'s order is `y`.

What is left are transposes at the chain's boundaries: views (NumPy's transpose copies
nothing), so the values the user sees keep their NCHW layout. The convolutions that take
window rows change (one group, static images of float dtype, from `ROWS_MIN_CHANNELS` input
channels); then a few-channel one (a 3-channel stem, its weight gradient) joins them when it
borders the chain: its kernel keeps its im2col columns and turns the GEMM around to write
NHWC, so the stem's transposes cancel too and no ReLU mask multiplies through a strided view.
"""
from __future__ import annotations

from typing import Any

from ...ops import conv_nhwc, shaping, window
from ...ops import reduce as reduce_ops
from ...ops.conv_nhwc import TO_NCHW, TO_NHWC
from ..builder import InsertPoint
from ..ir import Graph, Node, Value
from ..rewriter import Rewriter
from ..types import Tensor

MAX_ROUNDS = 64
"""Rounds of moving transposes: each round moves every transpose one op down a chain."""

_NHWC_OF = {window.conv2d: conv_nhwc.conv2d_nhwc,
            window.conv2d_grad_input: conv_nhwc.conv2d_nhwc_grad_input,
            window.conv2d_grad_weight: conv_nhwc.conv2d_nhwc_grad_weight}


def run(graph: Graph, rw: Rewriter, threads: int = 1, native: bool = False) -> bool:
    """Convolutions to NHWC, then transposes moved down and cancelled; True if anything.
    `threads` > 1 (`set_context(num_threads=...)`) goes on each NHWC convolution, and on the
    one-group convolutions left NCHW: their kernels may split their blocks over that many
    threads. `native` (the compile's backend may use Numba) goes on each NHWC convolution:
    its parts may run as native code (ops/conv_native.py), the same numbers."""
    for node in list(graph.walk()):
        if node.op in _NHWC_OF and node.parent is not None and _rows_conv(node):
            _to_nhwc(node, rw, threads, native)
    _sink_transposes(graph, rw)
    joining = [node for node in graph.walk() if node.op in _NHWC_OF and
               node.parent is not None and _joins_chain(node)]
    for node in joining:
        _to_nhwc(node, rw, threads, native)
    if joining:
        _sink_transposes(graph, rw)
    for node in graph.walk():
        if node.op in _NHWC_OF and threads > 1 and node.attrs.get("groups", 1) == 1:
            rw.set_attr(node, "threads", threads)  # NOTE: column GEMMs left NCHW
    for node in list(graph.walk()):  # NOTE: the transposes moved past, so the dump reads well
        if node.op is shaping.transpose and not node.output.uses:
            rw.erase(node)
    return rw.changed


def _sink_transposes(graph: Graph, rw: Rewriter) -> None:
    for _ in range(MAX_ROUNDS):
        moved = False
        for node in list(graph.walk()):
            if node.parent is None or node.is_region or node.control_inputs:
                continue
            moved |= _cancel(node, rw) or _sink_elementwise(node, rw) or _sink_reduce(node, rw)
        if not moved:
            break


def _joins_chain(node: Node) -> bool:
    """A few-channel convolution (a 3-channel stem, its weight gradient) whose NHWC form
    only turns its column GEMM around, and that borders the NHWC chain: its result goes,
    through elementwise ops, only into the chain's transposes, or (a weight gradient) its
    adjoint comes out of the chain. Converted, its transposes cancel too, and nothing after
    it reads a transposed view with strides (the backward's ReLU mask did, 4-5 ms of a
    ResNet step)."""
    if node.attrs.get("groups", 1) != 1:
        return False
    if node.op is window.conv2d_grad_weight:
        return all(_image(v.type) for v in node.inputs) and \
            _nchw_source(node.inputs[1]) is not None
    return _image(node.inputs[0].type) and _image(node.output.type) and \
        _feeds_only_chain(node.output, set())


def _feeds_only_chain(value: Value, seen: set[int]) -> bool:
    """Every use of `value`, followed through 4-d elementwise ops, is a transpose to NHWC."""
    if id(value) in seen:
        return True
    seen.add(id(value))
    for use in value.uses:
        user = use.user
        if not isinstance(user, Node) or user.control_inputs:
            return False
        if user.op is shaping.transpose and tuple(user.attrs.get("perm") or ()) == TO_NHWC:
            continue
        if not (_sinks(user) and _feeds_only_chain(user.output, seen)):
            return False
    return bool(value.uses)


def _image(t: Any) -> bool:
    return isinstance(t, Tensor) and t.rank == 4 and t.dtype.kind == "f" and \
        all(isinstance(d, int) for d in t.shape[1:])


def _rows_conv(node: Node) -> bool:
    """A convolution the window-row lowering computes (the NHWC kernels are that lowering):
    one group, float images of static C, H, W on both sides, enough input channels."""
    if node.op is window.conv2d_grad_weight:
        images = [v.type for v in node.inputs]
    else:
        images = [node.inputs[0].type, node.output.type]
    if node.attrs.get("groups", 1) != 1 or not all(_image(t) for t in images):
        return False
    channels = node.attrs["x_shape"][1] if node.op is window.conv2d_grad_input else \
        images[0].shape[1]
    return isinstance(channels, int) and channels >= window.ROWS_MIN_CHANNELS


def _transpose(b: Any, value: Value, perm: tuple[int, ...]) -> Value:
    return b.op(shaping.transpose, value, perm=perm, name=value.name)


def _to_nhwc(node: Node, rw: Rewriter, threads: int, native: bool) -> None:
    """`conv(x, w)` -> `transpose(conv_nhwc(transpose(x), w))` (the gradients alike: every 4-d
    image operand in, the 4-d image result out; the weight gradient's result is OIHW)."""
    b = rw.builder(InsertPoint.before(node), node.loc)
    images = (0, 1) if node.op is window.conv2d_grad_weight else (0,)
    inputs = [_transpose(b, v, TO_NHWC) if k in images else v for k, v in enumerate(node.inputs)]
    attrs = {**node.attrs, **({"threads": threads} if threads > 1 else {}),
             **({"native": True} if native else {})}
    out = b.op(_NHWC_OF[node.op], *inputs, name=node.output.name, **attrs)
    if node.op is not window.conv2d_grad_weight:
        out = _transpose(b, out, TO_NCHW)
    rw.replace(node, [out])


def _nchw_source(value: Value) -> Value | None:
    """`y` when `value` is `transpose(y, TO_NCHW)`."""
    node = value.producer
    if node is not None and node.op is shaping.transpose and \
            tuple(node.attrs.get("perm") or ()) == TO_NCHW:
        return node.inputs[0]
    return None


def _cancel(node: Node, rw: Rewriter) -> bool:
    """transpose(transpose(y, p), q) with q undoing p: y."""
    if node.op is not shaping.transpose or not node.attrs.get("perm"):
        return False
    inner = node.inputs[0].producer
    if inner is None or inner.op is not shaping.transpose or not inner.attrs.get("perm"):
        return False
    p, q = tuple(inner.attrs["perm"]), tuple(node.attrs["perm"])
    if len(p) != len(q) or tuple(p[k] for k in q) != tuple(range(len(p))):
        return False
    rw.replace_value(node.output, inner.inputs[0])
    rw.erase(node)
    return True


def _sink_elementwise(node: Node, rw: Rewriter) -> bool:
    """op(transpose(y), z) -> transpose(op(y, transpose(z)^-1)) for an elementwise op over
    4-d operands (0-d ones stay as they are)."""
    sources = [_nchw_source(v) for v in node.inputs]
    if not _sinks(node) or all(s is None for s in sources):
        return False
    b = rw.builder(InsertPoint.before(node), node.loc)
    inputs = [s if s is not None else _transpose(b, v, TO_NHWC)
              if isinstance(v.type, Tensor) and v.type.rank == 4 else v
              for v, s in zip(node.inputs, sources)]
    out = b.op(node.op, *inputs, name=node.output.name, **node.attrs)
    rw.replace(node, [_transpose(b, out, TO_NCHW)])
    return True


def _sinks(node: Node) -> bool:
    """An elementwise op a transpose moves through: one 4-d result, operands 4-d or 0-d."""
    if not getattr(node.op, "elementwise", False) or node.op.effects or \
            len(node.outputs) != 1 or node.control_inputs:
        return False
    t = node.output.type
    return isinstance(t, Tensor) and t.rank == 4 and all(
        not isinstance(v.type, Tensor) or v.type.rank in (0, 4) for v in node.inputs)


def _sink_reduce(node: Node, rw: Rewriter) -> bool:
    """sum/mean(transpose(y), axes) -> the same reduction of y over the moved axes, when the
    axes it keeps stay in their order (keepdims: a transpose after it)."""
    if node.op not in (reduce_ops.sum_, reduce_ops.mean) or node.control_inputs:
        return False
    source = _nchw_source(node.inputs[0]) if len(node.inputs) == 1 else None
    axis = node.attrs.get("axis")
    if source is None or axis is None:
        return False
    axes = {a % 4 for a in (axis if isinstance(axis, tuple | list) else (axis,))}
    moved = tuple(sorted(TO_NCHW[a] for a in axes))
    kept = [TO_NCHW[a] for a in range(4) if a not in axes]
    keepdims = bool(node.attrs.get("keepdims"))
    if not keepdims and kept != sorted(kept):
        return False
    b = rw.builder(InsertPoint.before(node), node.loc)
    out = b.op(node.op, source, name=node.output.name, **{**node.attrs, "axis": moved})
    rw.replace(node, [_transpose(b, out, TO_NCHW) if keepdims else out])
    return True
