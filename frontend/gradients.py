"""Gradient functions called inside compiled code (`grad(f)(x)` in a function that is itself
compiled or differentiated, a training step's `self.grad(self.network, self.weights)(x, sens)`).

`grad`, `value_and_grad` and `GradOperation` run while compiling, on compile-time arguments (a
cell, a function, the Parameters behind `self.weights`). A call of the gradient function they
make is compiled into the caller's graph: the forward is inlined at the call like any helper,
then those nodes are differentiated in place (`graph.gradient.gradient_of`), so the gradients,
the forward's effects and whatever the caller does next (an in-place update of the weights)
are one graph.
"""
from __future__ import annotations

import linecache
from typing import Any, Callable

import numpy as np

from ..graph import Builder, InsertPoint, Tensor, Value
from ..graph.autodiff import NotDifferentiable
from ..graph.gradient import (COMPILE_TIME_ATTR, GRADIENT_ATTR, GradRequest, GradSpecError,
                              gradient_of, position_groups)
from ..graph.ir import Loc
from ..nn.cell import Cell, Parameter
from .aliases import current
from .context import Frame
from .errors import CompileError
from .guards import resolve_path
from .scope import wrap
from .values import PyList, Ref, describe


def is_gradient_function(func: Any) -> bool:
    """True for a gradient function (a `GradFunction`, or a `Ref` to one)."""
    return hasattr(type(_object(func)), GRADIENT_ATTR)


def makes_gradient_functions(func: Any) -> bool:
    """True for `grad`, `value_and_grad`, `GradOperation` and its instances."""
    return getattr(_object(func), COMPILE_TIME_ATTR, False) is True


def _object(func: Any) -> Any:
    return func.obj if isinstance(func, Ref) else func


def call_at_compile_time(f: Frame, func: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`grad(fn, ...)`, `GradOperation(...)` or `grad_op(fn, weights)`, run now."""
    try:
        return _object(func)(*(_python(f, a) for a in args),
                             **{k: _python(f, v) for k, v in kwargs.items()})
    except (TypeError, ValueError) as exc:
        raise f.error(str(exc), "pass a cell or function and compile-time options; weights "
                      "are Parameters of the compiled cell (e.g. self.weights)") from None


def _python(f: Frame, v: Any) -> Any:
    """An argument of grad/GradOperation as the Python object it stands for (a Parameter for
    the graph input reading one)."""
    if isinstance(v, Ref):
        return v.obj
    if isinstance(v, tuple):
        return tuple(_python(f, x) for x in v)
    if isinstance(v, PyList):
        return [_python(f, x) for x in v.items]
    if isinstance(v, Value):
        found = _parameter_of(f, v)
        if found is None:
            raise f.error(f"{describe(v)} is not a Parameter of the compiled cell, so it cannot "
                          "be a weight to differentiate", "pass Parameters of self (e.g. "
                          "self.weights = ParameterTuple(net.trainable_params()))")
        return found
    return v


def _parameter_of(f: Frame, v: Value) -> Parameter | None:
    compiler = f.compiler
    for path, value in compiler.params.items():
        if current(f, path, value) is v or value is v:
            found = resolve_path(compiler.root, path)
            return found if isinstance(found, Parameter) else None
    return None


def call_gradient(f: Frame, func: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """A call of a gradient function: its forward inlined here, then differentiated here."""
    forward, request = getattr(_object(func), GRADIENT_ATTR)
    args = list(args)
    sens = None
    if request.sens and "sens" in kwargs:
        kwargs = dict(kwargs)
        args.append(kwargs.pop("sens"))
    if request.sens:
        if not args:
            raise f.error("a gradient function made with sens_param=True needs the output's "
                          "adjoint (sens) as its last argument")
        sens = f.materialise(args.pop())
    # NOTE: each differentiated argument gets a value of its own, so f(x, x) differentiated
    # by position 0 and 1 gives each position its own gradient, and no use of x outside the
    # call adds to them.
    args = [_own(f, a) for a in args]
    for w in request.weights or ():
        _weight_path(f, w)
    known = {path: current(f, path, v) for path, v in f.compiler.params.items()}
    block = f.builder.ip.block
    start = len(block.nodes)
    callee = Ref(forward, f.compiler.path_of(forward)) if isinstance(forward, Cell) else forward
    result = f.call(callee, args, kwargs)
    out = f.materialise(result)
    if f.builder.ip.block is not block or f.builder.ip.anchor is not None:
        raise f.error("internal error: the forward of this gradient call was not built in "
                      "one place", "please report it")
    found = differentiate_nodes(
        f, block, out, tuple(block.nodes[start:]), request, args, sens,
        lambda: [(_weight_values(f, w, known), np.shape(w), np.dtype(w.dtype))
                 for w in request.weights] if request.weights is not None else None)
    if request.value:
        return result, found[1]  # NOTE: the output as the forward made it (with its aux)
    return found


def differentiate_nodes(f: Frame, block: Any, out: Value, nodes: tuple, request: GradRequest,
                        args: list[Any], sens: Value | None,
                        weights: Callable[[], Any] = lambda: None) -> Any:
    """The gradient of `out`, computed by the forward `nodes` of `block` from `args`, against
    `sens`, appended at the end of `block`; errors name the user's line."""
    try:
        groups = position_groups(request, len(args), lambda p: _arrays(args[p]), None)
        b = Builder(InsertPoint.at_end(block), f.builder.loc)
        made = out.producer.loc if out.producer is not None else None  # the forward's line
        found = gradient_of(f.compiler.graph, b, out, request, groups, weights(), sens, made,
                            nodes)
    except GradSpecError as err:
        raise _error(f, str(err), err.loc, err.hint) from None
    except NotDifferentiable as err:
        raise _error(f, f"cannot differentiate this line: {err}", err.loc,
                     "use ops.stop_gradient where no gradient should flow, or rewrite it with "
                     "ops that have gradients") from None
    _refresh_last_effect(f, block)
    return found


def _refresh_last_effect(f: Frame, block: Any) -> None:
    """Differentiating may replace an effect (dropout by its mask's draw): later effects are
    ordered after the block's last effect that still exists."""
    last = f.compiler.last_effect.get(block)
    if last is None or last.parent is block:
        return
    effects = [n for n in block.nodes if n.effectful]
    if effects:
        f.compiler.last_effect[block] = effects[-1]
    else:
        del f.compiler.last_effect[block]


def _own(f: Frame, a: Any) -> Any:
    if isinstance(a, Value) and isinstance(a.type, Tensor):
        return f.op("depend", a, name=a.name)
    if isinstance(a, tuple):
        return tuple(_own(f, x) for x in a)
    return a


def _arrays(a: Any) -> list[Value]:
    """The arrays an argument holds (what a gradient by its position differentiates)."""
    if isinstance(a, Value):
        return [a] if isinstance(a.type, Tensor) else []
    if isinstance(a, tuple):
        return [v for x in a for v in _arrays(x)]
    if isinstance(a, PyList):
        return [v for x in a.items for v in _arrays(x)]
    return []


def _weight_path(f: Frame, weight: Parameter) -> str:
    path = f.compiler.path_of(weight)
    if path is None:
        raise f.error(f"the weight {getattr(weight, 'name', '?')!r} is not a Parameter of the "
                      "compiled cell, so compiled code cannot read it",
                      "differentiate with respect to Parameters of cells under self")
    wrap(f, weight, path, None)
    return path


def _weight_values(f: Frame, weight: Parameter, known: dict[str, Value]) -> list[Value]:
    """The values the forward read `weight` by: every graph input at a path holding it (as it
    was before the forward, for paths known then)."""
    found = []
    for path, value in f.compiler.params.items():
        if resolve_path(f.compiler.root, path) is weight:
            found.append(known.get(path, value))
    return found


def _error(f: Frame, message: str, loc: Loc | None, hint: str) -> CompileError:
    """A CompileError at `loc` (the user's forward line), else at the gradient call."""
    if loc is None:
        return f.error(message, hint)
    text = loc.text or linecache.getline(loc.file, loc.line)
    return CompileError(message, loc.file, loc.line, loc.col, text, hint)
