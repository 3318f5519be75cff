"""A convolution's input and weight gradients on two threads at once: where both read the same
adjoint in the same block, with the same geometry, the pass puts one `conv2d_nhwc_grads` node
in place of the two (ops/conv_pairs.py), its two items taken out for their users. The caller
runs the input gradient while a pool worker runs the weight gradient (then, at a stride, the
input gradient's parts the caller has not reached), every part at one thread's block bounds,
so the results are `num_threads=1`'s bit for bit; one hand-off per pair instead of one per
split kernel, and no weight-gradient products kept for a later sum.

Only at `num_threads=2` (with more threads, a kernel split over all of them keeps them all
busy; not measured, two cores here), and only where each gradient's static work (the forward's
multiply-adds) reaches `PAIR_MIN_WORK`; a symbolic size keeps the two kernels. Runs before
`place_threads`, which then judges the gradients left unpaired.
"""
from __future__ import annotations

from ...ops.conv_nhwc import conv2d_nhwc_grad_input, conv2d_nhwc_grad_weight
from ...ops.conv_pairs import conv2d_nhwc_grads
from ..analysis import defined_before
from ..builder import InsertPoint
from ..ir import Graph, Node
from ..rewriter import Rewriter
from .place_threads import conv_work

PAIR_MIN_WORK = 1 << 22
"""Multiply-adds each gradient must reach for the pair to pay. Measured on the ResNet's
layers (real-time priority, wall time of both gradients paired against one after the other
at one thread, and against each split by images): 9.4M-75.5M ran 0.51-0.98x and 0.68-1.06x;
the 1x1 projections at batch 32 (4.2M) 0.72-0.82x; 4.7M 3x3 layers 0.92-0.97x at 4 images but
1.06-1.11x at 2; smaller ones lost more (2.4M, one image: 1.3-1.6x). docs/performance-history.md."""

_GEOMETRY = ("stride", "padding", "pad_mode", "dilation", "groups")


def run(graph: Graph, rw: Rewriter, threads: int = 1) -> bool:
    """Each pairable (input gradient, weight gradient) -> one `conv2d_nhwc_grads` node."""
    if threads != 2:
        return False
    for node in list(graph.walk()):
        if node.is_region or node.op is not conv2d_nhwc_grad_input or node.parent is None:
            continue
        partner = _partner(node)
        if partner is None:
            continue
        first = min(node, partner, key=node.parent.index)  # NOTE: a transpose the layout
        # pass made for the later one may stand between them: then they stay apart
        if all(defined_before(v, first) for v in (*node.inputs, *partner.inputs)):
            _pair(node, partner, rw)
    return rw.changed


def _partner(grad_input: Node) -> Node | None:
    """The weight gradient in `grad_input`'s block reading the same adjoint with the same
    geometry, when both are big enough to pair; else None."""
    adjoint = grad_input.inputs[0]
    work = conv_work(grad_input)
    if work is None or work < PAIR_MIN_WORK:
        return None
    for user in adjoint.users:
        if isinstance(user, Node) and not user.is_region and \
                user.op is conv2d_nhwc_grad_weight and user.parent is grad_input.parent and \
                user.inputs[1] is adjoint and \
                all(user.attrs[k] == grad_input.attrs[k] for k in _GEOMETRY) and \
                tuple(user.attrs["w_shape"]) == tuple(grad_input.inputs[1].type.shape):
            return user
    return None


def _pair(grad_input: Node, grad_weight: Node, rw: Rewriter) -> None:
    """One pair node where the earlier of the two stood (its inputs, the forward's values and
    the adjoint, are all defined before either), the two items taken out after it."""
    block = grad_input.parent
    first = min(grad_input, grad_weight, key=block.index)
    b = rw.builder(InsertPoint.before(first), first.loc)
    attrs = {k: grad_input.attrs[k] for k in _GEOMETRY}
    both = b.op(conv2d_nhwc_grads, grad_weight.inputs[0], grad_input.inputs[0],
                grad_input.inputs[1], x_shape=grad_input.attrs["x_shape"],
                w_shape=grad_weight.attrs["w_shape"], threads=2,
                native=grad_input.attrs.get("native", False), **attrs)
    dx = b.op("tuple_getitem", both, index=0)
    dw = b.op("tuple_getitem", both, index=1)
    rw.replace(grad_input, [dx])
    rw.replace(grad_weight, [dw])
