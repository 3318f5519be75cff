"""A loss and its gradient from one softmax: `softmax_cross_entropy(logits, labels)` (sparse) and
`softmax_cross_entropy_grad(logits, labels, g)` of the same logits, labels and reduction become
one `softmax_cross_entropy_with_grad` node, where the loss was.

A train step computes both (the loss to return, the gradient to descend); apart, each takes its
own softmax and checks the labels again. The fused kernel gives the very same numbers. The
gradient moves up to the loss, so its adjoint `g` must exist there: a graph input, a value made
before the loss, or a constant (moved up with it, being free of inputs).
"""
from __future__ import annotations

from ...ops import losses
from ...ops import python as pyops
from ..builder import InsertPoint
from ..ir import Block, Graph, Node, Value
from ..rewriter import Rewriter


def run(graph: Graph, rw: Rewriter) -> bool:
    """Fuse each sparse softmax cross entropy with a gradient of it in the same block."""
    for node in list(graph.walk()):
        if node.parent is None or node.op is not losses.softmax_cross_entropy or \
                not node.attrs.get("sparse"):
            continue
        grad = _gradient_of(node)
        if grad is not None and _available(grad.inputs[2], node, rw):
            _fuse(node, grad, rw)
    return rw.changed


def _gradient_of(loss: Node) -> Node | None:
    logits, labels = loss.inputs
    for use in logits.uses:
        user = use.user
        if isinstance(user, Node) and user.op is losses.softmax_cross_entropy_grad and \
                user.parent is loss.parent and user.inputs[0] is logits and \
                user.inputs[1] is labels and \
                user.attrs.get("reduction") == loss.attrs.get("reduction"):
            return user
    return None


def _available(g: Value, loss: Node, rw: Rewriter) -> bool:
    """`g` can be read where `loss` is (moving a constant up if need be)."""
    producer = g.producer
    block: Block = loss.parent
    if producer is None or producer.parent is not block:
        return producer is None or _outside(producer, block)
    if block.index(producer) < block.index(loss):
        return True
    if producer.op is pyops.constant and not producer.inputs:
        rw.move(producer, InsertPoint.before(loss))
        return True
    return False


def _outside(producer: Node, block: Block) -> bool:
    """`producer` is in a block enclosing `block` (so it ran before anything in `block`)."""
    owner = block.owner_node
    while owner is not None:
        if owner.parent is producer.parent:
            return owner.parent.index(producer) < owner.parent.index(owner)
        owner = owner.parent.owner_node
    return False


def _fuse(loss: Node, grad: Node, rw: Rewriter) -> None:
    b = rw.builder(InsertPoint.before(loss), loss.loc)
    pair = b.op("softmax_cross_entropy_with_grad", *loss.inputs, grad.inputs[2],
                reduction=loss.attrs.get("reduction", "none"), name="loss_and_grad")
    value = b.op("tuple_getitem", pair, index=0, name=loss.output.name)
    gradient = b.op("tuple_getitem", pair, index=1, name=grad.output.name)
    rw.replace(loss, [value])
    rw.replace(grad, [gradient])
