"""Function transforms called inside compiled code (`jacrev(f)(x)`, `ops.jvp(f, x, v)`, and the
top-level call of every transform, which compiles such a call).

As for gradient functions (frontend/gradients.py), the forward is inlined at the call like any
helper and its nodes are transformed in place (graph/jacobian.py), so transforms nest in each
other and in grad, and whatever the caller does next is one graph.
"""
from __future__ import annotations

from typing import Any

from ..common.markers import DIRECT_ATTR, TRANSFORM_ATTR
from ..graph import Builder, InsertPoint, Tensor, Value
from ..graph.autodiff import NotDifferentiable
from ..graph.gradient import GradSpecError, position_groups
from ..graph.jacobian import DERIVATIVE, JVP, VMAP, TransformRequest, transform_values
from ..nn.cell import Cell
from .batching import call_vmap
from .context import Frame
from .gradients import _arrays, _error, _own, _refresh_last_effect
from .values import PyList, Ref


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
    callee = Ref(forward, f.compiler.path_of(forward)) if isinstance(forward, Cell) else forward
    if request.kind == VMAP:
        return call_vmap(f, callee, request, args)
    return _inline(f, callee, request, args, tangents)


def is_transform_call(func: Any) -> bool:
    """True for `ops.jvp`, `ops.derivative` (compiled in place), `ops.vjp`, `ops.linearize`
    (refused: they return Python functions)."""
    return getattr(func, DIRECT_ATTR, None) is not None


def call_direct(f: Frame, func: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`ops.jvp(fn, inputs, v, has_aux)` or `ops.derivative(fn, primals, order)` in place."""
    kind = getattr(func, DIRECT_ATTR)
    if kind not in (JVP, DERIVATIVE):
        raise f.error(f"ops.{kind} returns a Python function, which compiled code cannot "
                      "hold", "call ops.jvp, ops.jacrev or ops.grad(..., sens) inside compiled "
                      f"code, or call ops.{kind} outside it")
    names = ("fn", "inputs", "v", "has_aux") if kind == JVP else ("fn", "primals", "order")
    if len(args) > len(names) or set(kwargs) - set(names[len(args):]):
        raise f.error(f"ops.{kind} takes ({', '.join(names)})")
    bound = dict(zip(names, args), **kwargs)
    if any(n not in bound for n in names[:3]):
        raise f.error(f"ops.{kind} needs {', '.join(names[:3])}")
    flags = {k: bound.get(k) for k in names[3:]}
    if kind == JVP:
        has_aux = flags.get("has_aux") or False
        request = TransformRequest(JVP, has_aux=bool(has_aux))
        return _inline(f, bound["fn"], request, _items(bound["inputs"]), _items(bound["v"]))
    order = bound["order"]
    if isinstance(order, bool) or not isinstance(order, int) or order < 1:
        raise f.error("ops.derivative needs a Python int order >= 1")
    return _inline(f, bound["fn"], TransformRequest(DERIVATIVE, order=order),
                   _items(bound["primals"]), [])


def _tangents(f: Frame, t: Any) -> list[Value]:
    """The arrays of a tangent argument (a constant array too, made a value)."""
    if isinstance(t, tuple | PyList):
        return [v for x in _items(t) for v in _tangents(f, x)]
    value = f.materialise(t)
    return [value] if isinstance(value.type, Tensor) else []


def _items(a: Any) -> list[Any]:
    if isinstance(a, tuple):
        return list(a)
    if isinstance(a, PyList):
        return list(a.items)
    return [a]


def _inline(f: Frame, callee: Any, request: TransformRequest, args: list[Any],
            tangents: list[Any]) -> Any:
    args = [_own(f, a) for a in args]
    block = f.builder.ip.block
    start = len(block.nodes)
    out = f.materialise(f.call(callee, args, {}))
    b = Builder(InsertPoint.at_end(block), f.builder.loc)
    made = out.producer.loc if out.producer is not None else None
    try:
        if request.kind in (JVP, DERIVATIVE):
            groups = [_arrays(a) for a in args]
        else:
            groups = position_groups(request, len(args), lambda p: _arrays(args[p]), None)
        along = [v for t in tangents for v in _tangents(f, t)]
        found = transform_values(f.compiler.graph, b, start, out, request, groups, along)
    except GradSpecError as err:
        raise _error(f, str(err), err.loc or made, err.hint) from None
    except NotDifferentiable as err:
        raise _error(f, f"cannot differentiate this line: {err}", err.loc or made,
                     "use ops.stop_gradient where no derivative should flow, or rewrite it "
                     "with ops that have gradients") from None
    _refresh_last_effect(f, block)
    return found
