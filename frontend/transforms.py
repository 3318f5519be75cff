"""Function transforms called inside compiled code (`jacrev(f)(x)`, `ops.jvp(f, x, v)`, and the
top-level call of every transform, which compiles such a call).

As for gradient functions (frontend/gradients.py), the forward is inlined at the call like any
helper and its nodes are transformed in place (graph/jacobian.py), so transforms nest in each
other and in grad, and whatever the caller does next is one graph.
"""
from __future__ import annotations

from typing import Any

from ..common.markers import TRANSFORM_ATTR
from ..graph import Builder, InsertPoint, Value
from ..graph.autodiff import NotDifferentiable
from ..graph.gradient import GradSpecError, position_groups
from ..graph.jacobian import (DERIVATIVE, JACFWD, JVP, TransformRequest, jacfwd_of, jacrev_of,
                              jvp_of, split_aux)
from ..nn.cell import Cell
from .context import Frame
from .gradients import _arrays, _error, _own, _refresh_last_effect
from .values import Ref


def is_transform_function(func: Any) -> bool:
    """True for a function made by jacfwd/jacrev (or the runtime's jvp/derivative programs)."""
    return hasattr(type(func.obj if isinstance(func, Ref) else func), TRANSFORM_ATTR)


def call_transform(f: Frame, func: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """A call of a transform function: its forward inlined here, then transformed here."""
    obj = func.obj if isinstance(func, Ref) else func
    forward, request = getattr(obj, TRANSFORM_ATTR)
    if kwargs:
        raise f.error(f"a {request.kind} function takes positional arguments only",
                      "pass the inputs by position")
    args = list(args)
    tangents: list[Any] = []
    if request.kind == JVP:
        if len(args) % 2:
            raise f.error("jvp needs one tangent per input")
        half = len(args) // 2
        args, tangents = args[:half], args[half:]
    args = [_own(f, a) for a in args]
    block = f.builder.ip.block
    start = len(block.nodes)
    callee = Ref(forward, f.compiler.path_of(forward)) if isinstance(forward, Cell) else forward
    out = f.materialise(f.call(callee, args, {}))
    b = Builder(InsertPoint.at_end(block), f.builder.loc)
    made = out.producer.loc if out.producer is not None else None
    try:
        out, aux = split_aux(b, out, request.has_aux)
        found = _transform(f, b, start, out, request, args, tangents)
    except GradSpecError as err:
        raise _error(f, str(err), err.loc or made, err.hint) from None
    except NotDifferentiable as err:
        raise _error(f, f"cannot differentiate this line: {err}", err.loc or made,
                     "use ops.stop_gradient where no derivative should flow, or rewrite it "
                     "with ops that have gradients") from None
    _refresh_last_effect(f, block)
    if request.kind in (JVP, DERIVATIVE):
        return (out, found, aux) if request.has_aux else (out, found)
    return (found, aux) if request.has_aux else found


def _transform(f: Frame, b: Builder, start: int, out: Value, request: TransformRequest,
               args: list[Any], tangents: list[Any]) -> Any:
    graph = f.compiler.graph
    if request.kind in (JVP, DERIVATIVE):
        inputs = [v for a in args for v in _arrays(a)]
        if request.kind == JVP:
            along = [f.materialise(v) for t in tangents for v in _arrays(t)]
            if len(along) != len(inputs):
                raise GradSpecError(f"jvp: {len(inputs)} input array(s) but {len(along)} "
                                    "tangent(s)", "give v the structure of the inputs")
            return jvp_of(graph, b, start, out, inputs, along)
        series = out
        for _ in range(request.order):  # NOTE: each order differentiates the one before
            ones = [b.op("ones_like", x) for x in inputs]
            series = jvp_of(graph, b, start, series, inputs, ones)
        return series
    groups = position_groups(request, len(args), lambda p: _arrays(args[p]), None)
    flat = [v for group in groups for v in group if v is not None]
    make = jacfwd_of if request.kind == JACFWD else jacrev_of
    found = dict(zip(flat, make(graph, b, start, out, flat)))
    packed = tuple(found[group[0]] if len(group) == 1 else tuple(found[v] for v in group)
                   for group in groups)
    return packed[0] if request.single else packed
