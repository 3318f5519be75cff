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
from ..graph.gradient import ALL, GradRequest, GradSpecError, position_groups
from ..graph.jacobian import DERIVATIVE, JVP, VMAP, TransformRequest, transform_values
from ..nn.cell import Cell
from .batching import call_vmap
from .context import Frame
from .errors import CompileError
from .gradients import (_arrays, _error, _own, _refresh_last_effect, call_gradient,
                        differentiate_nodes)
from .values import PyList, Ref


def is_transform_function(func: Any) -> bool:
    """True for a function made by jacfwd/jacrev (or the runtime's jvp/derivative programs)."""
    return hasattr(type(func.obj if isinstance(func, Ref) else func), TRANSFORM_ATTR)


def call_transform(f: Frame, func: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """A call of a transform function: its forward inlined here, then transformed here."""
    obj = func.obj if isinstance(func, Ref) else func
    if isinstance(obj, BoundTransform):
        return obj.call(f, args, kwargs)
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
    """True for `ops.jvp`, `ops.derivative`, `ops.vjp`, `ops.linearize` (compiled in place)."""
    return getattr(func, DIRECT_ATTR, None) is not None


def call_direct(f: Frame, func: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`ops.jvp(fn, inputs, v, has_aux)`, `ops.derivative(fn, primals, order)`,
    `ops.vjp(fn, *inputs, has_aux=...)` or `ops.linearize(fn, inputs)` in place."""
    kind = getattr(func, DIRECT_ATTR)
    if kind == "vjp":
        return _vjp(f, args, kwargs)
    if kind == "linearize":
        names: tuple[str, ...] = ("fn", "inputs")
    else:
        names = ("fn", "inputs", "v", "has_aux") if kind == JVP else ("fn", "primals", "order")
    if len(args) > len(names) or set(kwargs) - set(names[len(args):]):
        raise f.error(f"ops.{kind} takes ({', '.join(names)})")
    bound = dict(zip(names, args), **kwargs)
    if any(n not in bound for n in names[:3]):
        raise f.error(f"ops.{kind} needs {', '.join(names[:3])}")
    if kind == "linearize":
        inputs = [_own(f, a) for a in _items(bound["inputs"])]
        out = f.call(bound["fn"], inputs, {})
        return out, BoundTransform("linearize", bound["fn"], inputs, False)
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


def _vjp(f: Frame, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`ops.vjp(fn, *inputs, has_aux=...)`: the output, and a vjp_fn that compiles the
    gradient at these inputs where it is called."""
    if not args or set(kwargs) - {"weights", "has_aux"}:
        raise f.error("ops.vjp takes (fn, *inputs, weights=None, has_aux=False)")
    if kwargs.get("weights") is not None:
        raise f.error("ops.vjp(..., weights=...) is not supported inside compiled code",
                      "call ops.grad(fn, grad_position, weights) with the output's adjoint "
                      "inside compiled code (GradOperation(sens_param=True)), or call ops.vjp "
                      "outside it")
    has_aux = kwargs.get("has_aux") or False
    if not isinstance(has_aux, bool):
        raise f.error("ops.vjp needs a Python bool has_aux")
    fn, inputs = args[0], list(args[1:])
    if len(inputs) == 1 and isinstance(inputs[0], tuple | PyList):
        inputs = _items(inputs[0])
    inputs = [_own(f, a) for a in inputs]
    block, start = f.builder.ip.block, len(f.builder.ip.block.nodes)
    result = f.call(fn, inputs, {})
    out = f.materialise(result)
    vjp_fn = BoundTransform("vjp", fn, inputs, has_aux, f)
    if f.builder.ip.block is block and f.builder.ip.anchor is None:
        vjp_fn.forward = _Forward(block, tuple(block.nodes[start:]), out)
    if not has_aux:
        return result, vjp_fn
    if not isinstance(result, tuple) or len(result) < 2:
        raise f.error("ops.vjp(..., has_aux=True) needs fn to return more than one value",
                      "return `output, aux` or set has_aux=False")
    return result[0], vjp_fn, tuple(result[1:])


class _Forward:
    """The nodes `ops.vjp` built for the forward (in `block`, computing `out`)."""

    def __init__(self, block: Any, nodes: tuple, out: Value) -> None:
        self.block, self.nodes, self.out = block, nodes, out

    def reusable(self, f: Frame) -> bool:
        """True when `vjp_fn` is called in the forward's block with nothing since that could
        change what it read: the block still holds those nodes and no effect (an in-place
        write, caller state, a draw) ran after them."""
        block = self.block
        if f.builder.ip.block is not block or f.builder.ip.anchor is not None or not self.nodes:
            return False
        try:
            start = block.nodes.index(self.nodes[0])
        except ValueError:
            return False
        end = start + len(self.nodes)
        return (tuple(block.nodes[start:end]) == self.nodes
                and not any(n.effectful for n in block.nodes[end:]))


class BoundTransform:
    """`vjp_fn` / `jvp_fn` made by ops.vjp / ops.linearize inside compiled code: a call
    compiles the gradient with the adjoint (the jvp along the tangents) at the inputs in place.
    The first `vjp_fn(v)` in the block of its `ops.vjp` differentiates the forward's own nodes
    (`forward`), so the backward reads the values the forward computed; any other call (after
    an effect, in another block, a second call) inlines the forward again, which then runs on
    the values as they are at that call."""
    __amber_transform__ = None  # NOTE: marks it for `call_transform`

    def __init__(self, kind: str, fn: Any, inputs: list[Any], has_aux: bool,
                 f: Frame | None = None) -> None:
        self.kind, self.fn, self.inputs, self.has_aux = kind, fn, inputs, has_aux
        self.forward: _Forward | None = None
        self.block = None if f is None else f.builder.ip.block
        self.writes = None if f is None else f.compiler.array_writes

    def call(self, f: Frame, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if kwargs:
            raise f.error(f"the function ops.{self.kind} returned takes positional arguments")
        if self.kind == "linearize":
            tangents = _items(args[0]) if len(args) == 1 and isinstance(
                args[0], tuple | PyList) else list(args)
            return _inline(f, self.fn, TransformRequest(JVP), list(self.inputs), tangents)[1]
        if len(args) != 1:
            raise f.error("vjp_fn takes one argument: the output's adjoint")
        request = GradRequest(ALL, len(self.inputs) == 1, None, self.has_aux, False, True)
        forward, self.forward = self.forward, None  # NOTE: its nodes are differentiated once
        if forward is not None and forward.reusable(f):
            found = _reverse(f, forward, request, self.inputs, f.materialise(args[0]))
        else:
            self._check_rerun(f)
            found = call_gradient(f, _Gradient(self.fn, request), [*self.inputs, args[0]], {})
        return found[0] if self.has_aux else found


    def _check_rerun(self, f: Frame) -> None:
        """A `vjp_fn` that runs the forward again must see what the forward saw: an array
        written in place since `ops.vjp` (here, or in a loop around this call only) would give
        another gradient than eager code's, whose residuals were saved before the write."""
        if self.block is None:
            return
        if f.compiler.array_writes != self.writes:
            raise _written_error(f)
        f.compiler.vjp_reruns.append((f.builder.ip.block, self.block, lambda: _written_error(f)))


def _written_error(f: Frame) -> CompileError:
    return f.error("an array was written in place between ops.vjp and this vjp_fn call, so "
                   "the forward it differentiates is not the one ops.vjp ran",
                   "call vjp_fn before the write (in the block of its ops.vjp), or write a "
                   "copy")


def _reverse(f: Frame, forward: _Forward, request: GradRequest, inputs: list[Any],
             sens: Value) -> Any:
    """The gradient of the recorded forward against `sens`, appended where the call is."""
    return differentiate_nodes(f, forward.block, forward.out, forward.nodes, request, inputs,
                               sens)


class _Gradient:
    """A gradient function made while compiling (what call_gradient reads)."""

    def __init__(self, forward: Any, request: GradRequest) -> None:
        self.request = (forward, request)

    @property
    def __amber_gradient__(self) -> tuple[Any, GradRequest]:
        return self.request


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
