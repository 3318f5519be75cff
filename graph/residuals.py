"""Splitting a differentiated graph into a forward that saves residuals and a backward that reads
them (`ops.vjp`, `ops.linearize`): the backward half runs once per `vjp_fn(v)` call without
running the forward again.

The cut is made at the backward's own inputs (the output's adjoint for vjp, the tangents for
linearize): every top-level node reading them, directly or through another moved node, moves to
the backward graph, and so does every pure node only those nodes read (constants, zeros, a
`cos(x)` only a rule needs). Whatever forward value the moved nodes still read is a residual:
the forward returns it and the backward takes it as a parameter, so tapes, trip counts and If
exports that reverse mode records are saved once by the forward call and read by each backward
call.
"""
from __future__ import annotations

from typing import Sequence

from .analysis import reads_at_any_depth
from .ir import Block, Graph, Node, Value


def split_backward(graph: Graph, inputs: Block, results: Sequence[Value]) -> tuple[list[Value],
                                                                                   Graph]:
    """Move the backward out of `graph.body` into a new graph. `inputs`: a block whose params
    (the adjoint or the tangents) the backward nodes of `graph.body` read; `results`: what the
    backward returns. Returns (residuals, backward graph); the backward graph's params are
    `inputs`' params, then one per residual (in that order). The caller makes `graph` return
    the residuals."""
    body = graph.body
    moved = _backward_nodes(body, set(inputs.params), results)
    order = [n for n in body.nodes if n in moved]
    for node in order:
        body.remove(node)
        inputs.append(node)
    inputs.set_results(list(results))
    residuals: list[Value] = []
    for node in order:
        for value in sorted(reads_at_any_depth(node), key=_position(body)):
            if _is_forward(value, body) and value not in residuals:
                residuals.append(value)
    for value in results:
        if _is_forward(value, body) and value not in residuals:
            residuals.append(value)
    for value in residuals:
        param = inputs.add_param(value.type, value.name)
        for use in list(value.uses):
            if _top(use.user, inputs) is not None:
                if isinstance(use.user, Node):
                    use.user.set_input(use.index, param)
                else:
                    use.user.set_result(use.index, param)
    for node in [n for top in order for n in top.walk()]:  # NOTE: effects order per half
        node.control_inputs = [c for c in node.control_inputs if _top(c, inputs) is not None]
    for node in body.walk():
        node.control_inputs = [c for c in node.control_inputs if _top(c, body) is not None]
    backward = Graph(f"{graph.name}_backward", inputs,
                     input_paths=tuple(str(i) for i in range(len(inputs.params))),
                     return_loc=graph.return_loc)
    return residuals, backward


def _backward_nodes(body: Block, sources: set[Value], results: Sequence[Value]) -> set[Node]:
    """The top-level nodes of `body` that read `sources` (at any depth, through each other),
    then the pure nodes whose every use is by one of them."""
    reached = set(sources)
    moved: set[Node] = set()
    for node in body.nodes:
        if reads_at_any_depth(node) & reached:
            moved.add(node)
            reached.update(node.outputs)
    kept = set(body.results)
    for node in reversed(body.nodes):
        if node in moved or _effectful(node) or any(v in kept for v in node.outputs):
            continue
        users = [_top(u.user, body) for v in node.outputs for u in v.uses]
        if users and all(u in moved for u in users):
            moved.add(node)
    return moved


def _effectful(node: Node) -> bool:
    return any(n.effectful for n in node.walk())


def _is_forward(value: Value, body: Block) -> bool:
    """Defined by `body` itself: a graph input or a top-level forward node's output."""
    owner = value.owner
    return owner is body or isinstance(owner, Node) and owner.parent is body


def _position(body: Block):  # type: ignore[no-untyped-def]
    """Sort key: graph inputs first, then values in the order their nodes run."""
    index = {node: k for k, node in enumerate(body.nodes)}

    def key(value: Value) -> tuple[int, int]:
        owner = value.owner
        return (index.get(owner, -1) if isinstance(owner, Node) else -1, value.index)
    return key


def _top(user: Node | Block, block: Block) -> Node | Block | None:
    """The node of `block` holding `user` (a node or a nested block), `block` for the block's
    own results, None when `user` is not inside `block`."""
    while True:
        if isinstance(user, Block):
            if user is block:
                return block
            owner = user.owner_node
            if owner is None:
                return None
            user = owner
        if user.parent is block:
            return user
        if user.parent is None:
            return None
        user = user.parent
