"""Function transforms with MindSpore 2.x's API: `jvp`, `derivative`, `jacfwd`, `jacrev`, `vmap`
(`vjp` and `linearize`, compiled as two halves, are in vjp.py).

Each is a jit target compiling one call of a transform function (`TransformFunction`), which the
frontend transforms in place (frontend/transforms.py -> graph/jacobian.py): compiled, cached by
signature and shown by `amber dump` like every amber function. Called inside compiled code,
`jacfwd(f)`/`jacrev(f)` run while compiling and `ops.jvp(...)`/`ops.derivative(...)` compile
in place, so the transforms nest in each other and in grad.
"""
from __future__ import annotations

import contextlib
import types
from typing import Any, Iterator

from ..common.markers import COMPILE_TIME_ATTR, DIRECT_ATTR
from ..frontend.errors import CompileError
from ..frontend.targets import FunctionWithRoot
from ..graph.jacobian import (DERIVATIVE, JACFWD, JACREV, JVP, VMAP, TransformRequest,
                              transform_graph)
from ..nn.cell import Cell
from .context import CompileOptions
from .grad import GradFunction, fixed_closure, user_code, with_user_code
from .jit import JitFunction
from .roots import FunctionRoot, RootOf
from .grad import _error
from .pipeline import Artifact, compile_target
from .specializations import JitBase
from .tracebacks import user_facing


def jacfwd(fn: Any, grad_position: int | tuple[int, ...] = 0, has_aux: bool = False
           ) -> TransformFunction:
    """The Jacobian function of `fn` by forward mode (MindSpore's `jacfwd`): for an int
    position, d fn(*args) / d args[position] shaped output.shape + input.shape; a tuple of them
    for a tuple of positions; (Jacobian, aux) when `has_aux`."""
    return _made(fn, TransformRequest(JACFWD, *_positions(grad_position), _flag(has_aux)))


def jacrev(fn: Any, grad_position: int | tuple[int, ...] = 0, has_aux: bool = False
           ) -> TransformFunction:
    """The same Jacobians by reverse mode (MindSpore's `jacrev`)."""
    return _made(fn, TransformRequest(JACREV, *_positions(grad_position), _flag(has_aux)))


setattr(jacfwd, COMPILE_TIME_ATTR, True)
setattr(jacrev, COMPILE_TIME_ATTR, True)


def jvp(fn: Any, inputs: Any, v: Any, has_aux: bool = False) -> tuple:
    """(fn(*inputs), J v) for `fn` at `inputs` along the tangents `v` (same structure as
    `inputs`), as MindSpore's `jvp`; with `has_aux`, (output, J v, aux)."""
    inputs, v = _tuple(inputs), _tuple(v)
    if len(inputs) != len(v):
        raise ValueError(f"jvp: {len(inputs)} input(s) but {len(v)} tangent(s) in v")
    return _made(fn, TransformRequest(JVP, has_aux=_flag(has_aux)))(*inputs, *v)


def derivative(fn: Any, primals: Any, order: int) -> tuple[Any, Any]:
    """(fn(*primals), the `order`-th derivative of fn along ones) as MindSpore's `derivative`
    (every input's first-order series 1, the higher ones 0)."""
    if isinstance(order, bool) or not isinstance(order, int) or order < 1:
        raise ValueError(f"derivative: order must be an int >= 1, got {order!r}")
    return _made(fn, TransformRequest(DERIVATIVE, order=order))(*_tuple(primals))


def vmap(fn: Any, in_axes: Any = 0, out_axes: Any = 0) -> TransformFunction:
    """`fn` over a batch (MindSpore's `vmap`): `in_axes` gives each argument's batch axis (an
    int, None for an argument shared by every example, or a tuple per argument, nested like
    the arguments), `out_axes` where the batch axis goes in each output. A Cell's Parameters
    are shared. NOTE: compiled as a loop over the examples (each takes its own branches and
    trip counts), not as one batched computation per op."""
    return _made(fn, TransformRequest(VMAP, in_axes=_axes(in_axes, True),
                                      out_axes=_axes(out_axes, False)))


setattr(vmap, COMPILE_TIME_ATTR, True)


def _axes(axes: Any, none_ok: bool) -> Any:
    if isinstance(axes, tuple | list):
        return tuple(_axes(a, none_ok) for a in axes)
    if axes is None and none_ok or isinstance(axes, int) and not isinstance(axes, bool):
        return axes
    raise TypeError(f"vmap: axes must be ints{', None' if none_ok else ''} or tuples of them, "
                    f"not {axes!r}")


for _direct in (jvp, derivative):
    setattr(_direct, DIRECT_ATTR, _direct.__name__)


class TransformFunction(JitBase):
    """The compiled transform of one `fn` (a function, a Cell, or a gradient or transform
    function) for one `TransformRequest`. Called inside compiled code, the frontend compiles
    it into the caller's graph instead (`__amber_transform__`)."""

    def __init__(self, fn: Any, request: TransformRequest,
                 options: CompileOptions | None = None) -> None:
        super().__init__(False, options)
        forward = fn.__wrapped__ if isinstance(fn, JitFunction) else fn
        self.__wrapped__ = forward
        self._request = request
        nested = isinstance(forward, Cell | GradFunction | TransformFunction)
        self._roots = None if nested else RootOf(forward)

    @property
    def __amber_transform__(self) -> tuple[Any, TransformRequest]:
        return self.__wrapped__, self._request

    @property
    def _instance(self) -> Any:
        forward = self.__wrapped__
        if isinstance(forward, Cell):
            return forward
        if isinstance(forward, GradFunction | TransformFunction):
            return forward._instance
        return self._roots.get()

    def __call__(self, *args: Any) -> Any:
        try:
            return self._run(self._instance, args, {})
        except CompileError as err:
            raise user_facing(err)

    def _artifact(self, instance: Any, args: tuple, kwargs: dict, options: CompileOptions,
                  title: str, signature: str, interpret: bool = False,
                  shapes: dict[str, tuple] | None = None) -> Artifact:
        """The forward compiled and transformed as a whole graph (a transform of a gradient
        or transform function compiles a call of it, transformed by the frontend)."""
        forward = self.__wrapped__
        if isinstance(forward, GradFunction | TransformFunction) or self._request.kind == VMAP:
            return super()._artifact(instance, args, kwargs, options, title, signature,
                                     interpret, shapes)
        nargs = len(args) // 2 if self._request.kind == JVP else len(args)
        if nargs * 2 != len(args) and self._request.kind == JVP:
            raise TypeError("jvp: one tangent per input")
        return compile_target(self._forward_target(instance), args[:nargs], kwargs, options,
                              title=title, signature=signature,
                              transform=lambda graph: self._transform(graph, nargs),
                              optimize_graph=not interpret, shapes=shapes)

    def _transform(self, graph: Any, nargs: int) -> None:
        with differentiation_errors(graph):
            transform_graph(graph, self._request, nargs)

    def _forward_target(self, instance: Any) -> Any:
        forward = self.__wrapped__
        if not isinstance(forward, Cell | types.FunctionType | types.MethodType):
            forward = _calling(forward)  # NOTE: an op (ops.sin) or another callable object
        if isinstance(forward, Cell) or instance is None:
            return forward
        if isinstance(instance, Cell) and not isinstance(instance, FunctionRoot):
            return types.MethodType(_calling_method(forward), instance)
        return FunctionWithRoot(forward, instance)

    def _target(self, instance: Any) -> Any:
        call = fixed_closure(_calling(self), self)
        call.__name__ = call.__qualname__ = self._title(instance).replace(".", "_")
        user = user_code(self._function(instance))
        if instance is None:
            return with_user_code(call, user)
        if isinstance(instance, Cell) and not isinstance(instance, FunctionRoot):
            method = fixed_closure(_calling_method(self), self)
            return types.MethodType(with_user_code(method, user), instance)
        return FunctionWithRoot(with_user_code(call, user), instance)

    def _function(self, instance: Any) -> Any:
        forward = self.__wrapped__
        if isinstance(forward, GradFunction | TransformFunction):
            return forward._function(instance)
        return type(forward).construct if isinstance(forward, Cell) else forward

    def _title(self, instance: Any) -> str:
        forward = self.__wrapped__
        if isinstance(forward, GradFunction | TransformFunction):
            inner = forward._title(instance)
        elif isinstance(forward, Cell):
            inner = f"{type(forward).__qualname__}.construct"
        else:
            inner = getattr(forward, "__qualname__", "function")
        return f"{self._request.kind}_{inner}"

    def _cache_token(self, options: CompileOptions) -> str:
        return f"{options.cache_token()} {self._token()}"

    def _token(self) -> str:
        forward = self.__wrapped__
        inner = forward._token() if isinstance(forward, GradFunction | TransformFunction) \
            else ""
        return f"{self._request!r}{inner}"

    def _eager(self, instance: Any, args: tuple, kwargs: dict) -> Any:
        from ..graph.interpreter import run_graph
        from .paths import access
        artifact = self._artifact(instance, args, kwargs, CompileOptions(0), "", "",
                                  interpret=True)
        graph = artifact.graph
        values = [access(instance, p)[1] for p in graph.param_paths]
        values += [args[int(path.partition(".")[0])] if "." not in path else
                   access(args[int(path.partition(".")[0])], path.partition(".")[2])[1]
                   for path in graph.input_paths]
        return run_graph(graph, *values)

    def __repr__(self) -> str:
        return (f"<amber {self._request.kind} function of {self._title(self._instance)} at "
                f"{id(self):#x}>")


_KEPT = 32
_made_functions: dict[tuple, tuple[Any, TransformFunction]] = {}
"""The transform functions made lately, by (id of fn, request): `ops.jvp(fn, ...)` called in
a loop compiles once. Each entry holds fn, so a matching id is that very object."""


@contextlib.contextmanager
def differentiation_errors(graph: Any) -> Iterator[None]:
    """Differentiating `graph` inside the `with`: its errors become CompileErrors at the line
    that failed (else at the function's result)."""
    from ..graph.autodiff import NotDifferentiable
    from ..graph.gradient import GradSpecError
    (result,) = graph.outputs
    loc = result.producer.loc if result.producer is not None else graph.return_loc
    try:
        yield
    except GradSpecError as err:
        raise _error(str(err), err.loc or loc, err.hint) from None
    except NotDifferentiable as err:
        raise _error(f"cannot differentiate this line: {err}", err.loc or loc,
                     "use ops.stop_gradient where no derivative should flow, or rewrite "
                     "it with ops that have gradients") from None


def _made(fn: Any, request: TransformRequest) -> TransformFunction:
    key = (id(fn), request)
    kept = _made_functions.get(key)
    if kept is not None and kept[0] is fn:
        return kept[1]
    made = TransformFunction(fn, request)
    if len(_made_functions) >= _KEPT:
        del _made_functions[next(iter(_made_functions))]
    _made_functions[key] = (fn, made)
    return made


def _calling(function: Any) -> Any:
    """A function calling `function` (the frontend compiles the call in place)."""
    def call_transform(*args):  # type: ignore[no-untyped-def]
        return function(*args)
    return call_transform


def _calling_method(function: Any) -> Any:
    def call_transform(self, *args):  # type: ignore[no-untyped-def]
        return function(*args)
    return call_transform


def _positions(grad_position: Any) -> tuple[tuple[int, ...], bool]:
    if isinstance(grad_position, bool) or not (
            isinstance(grad_position, int) or isinstance(grad_position, tuple) and grad_position
            and all(isinstance(p, int) and not isinstance(p, bool) for p in grad_position)):
        raise TypeError(f"grad_position must be an int or a non-empty tuple of ints, not "
                        f"{grad_position!r}")
    positions = (grad_position,) if isinstance(grad_position, int) else grad_position
    if any(p < 0 for p in positions) or len(set(positions)) != len(positions):
        raise ValueError(f"grad_position {grad_position!r}: positions must be >= 0 and distinct")
    return positions, isinstance(grad_position, int)


def _flag(has_aux: Any) -> bool:
    if not isinstance(has_aux, bool):
        raise TypeError(f"has_aux must be a bool, not {has_aux!r}")
    return has_aux


def _tuple(x: Any) -> tuple:
    return tuple(x) if isinstance(x, tuple | list) else (x,)
