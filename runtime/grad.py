"""Gradient functions with MindSpore 2.x's API: `grad`, `value_and_grad` and `GradOperation`.

A gradient function is a jit function whose graph is the forward graph differentiated
(`graph/gradient.py`): compiled, cached in memory and on disk by signature like any other, in either execution mode
(amber differentiates graphs; it has no op-by-op tape). Under `set_context(jit_enabled=False)`
it builds the same graph and runs it op by op with the reference interpreter instead of
generating code, with the same results.
"""
from __future__ import annotations

import linecache
import types
from dataclasses import dataclass
from typing import Any, Hashable, Iterable

import numpy as np

from ..common.markers import FIXED_CLOSURE_ATTR, TRANSFORM_ATTR, USER_CODE_ATTR
from ..common.tensor import as_results
from ..frontend.errors import CompileError
from ..graph.gradient import ALL, COMPILE_TIME_ATTR, FIRST, GRADIENT_ATTR, GradRequest
from ..graph.ir import Loc
from ..nn.cell import Cell, Parameter
from .context import CompileOptions
from .jit import JitFunction
from .specializations import JitBase
from .paths import access
from .pipeline import Artifact, compile_target
from ..frontend.targets import FunctionWithRoot
from .roots import FunctionRoot, RootOf
from .tracebacks import user_facing


def grad(fn: Any, grad_position: int | tuple[int, ...] | None = 0, weights: Any = None,
         has_aux: bool = False) -> GradFunction:
    """A function computing the gradient of `fn` (a function or a Cell) with respect to the
    arguments at `grad_position` and the Parameters in `weights`, as MindSpore's `grad`:
    one gradient for an int position, a tuple for a tuple of positions, a tuple for the
    weights, or (inputs' gradients, weights' gradients) for both; `has_aux=True`: `fn`
    returns (output, *aux), only the output is differentiated, and the result is
    (gradients, aux)."""
    return GradFunction(fn, _spec(grad_position, weights, has_aux, value=False))


def value_and_grad(fn: Any, grad_position: int | tuple[int, ...] | None = 0, weights: Any = None,
                   has_aux: bool = False) -> GradFunction:
    """Like `grad`, returning (fn's output, gradients)."""
    return GradFunction(fn, _spec(grad_position, weights, has_aux, value=True))


setattr(grad, COMPILE_TIME_ATTR, True)
setattr(value_and_grad, COMPILE_TIME_ATTR, True)


class GradOperation:
    """MindSpore's `ops.GradOperation(get_all=False, get_by_list=False, sens_param=False)`:
    `GradOperation(...)(fn)` or `(fn, weights)` gives the gradient function. Neither flag: the
    gradient of the first input; `get_all`: a tuple for every input; `get_by_list`: a tuple for
    the weights; both: (inputs, weights). `sens_param`: the last argument is the adjoint of the
    output."""

    __amber_compile_time__ = True
    """Created and called inside compiled code, it runs while compiling (see COMPILE_TIME_ATTR)."""

    KEPT = 8
    """How many gradient functions one GradOperation keeps (the most recently made)."""

    def __init__(self, get_all: bool = False, get_by_list: bool = False,
                 sens_param: bool = False) -> None:
        self.get_all, self.get_by_list, self.sens_param = get_all, get_by_list, sens_param
        self._made: dict[tuple, tuple[Any, tuple, GradFunction]] = {}

    def __call__(self, fn: Any, weights: Any = None) -> GradFunction:
        """The gradient function of `fn` (with respect to `weights`): the one made before for
        the same `fn` and weights, so an eager `TrainOneStepCell` calling
        `self.grad(self.network, self.weights)` every step compiles once, not every step."""
        found, single = _weights(() if weights is None else weights)
        key = (id(fn), tuple(map(id, found)), single)
        kept = self._made.get(key)
        # NOTE: the entry holds fn and the weights, so matching ids are those very objects
        if kept is not None and kept[0] is fn and all(a is b for a, b in zip(kept[1], found)):
            return kept[2]
        positions = ALL if self.get_all else (None if self.get_by_list else FIRST)
        made = GradFunction(fn, GradRequest(
            positions, not self.get_all, found if self.get_by_list else None, False, False,
            self.sens_param, single and self.get_by_list))
        if len(self._made) >= self.KEPT:
            del self._made[next(iter(self._made))]
        self._made[key] = (fn, found, made)
        return made

    def __getstate__(self) -> dict[str, Any]:
        """Copies and pickles keep the flags, not the gradient functions made (they hold the
        functions differentiated: a copy of a network gets gradient functions of its own)."""
        return {**self.__dict__, "_made": {}}

    def __repr__(self) -> str:
        return (f"GradOperation(get_all={self.get_all}, get_by_list={self.get_by_list}, "
                f"sens_param={self.sens_param})")


def _spec(grad_position: Any, weights: Any, has_aux: bool, value: bool) -> GradRequest:
    if grad_position is None and weights is None:
        raise ValueError("grad: grad_position and weights cannot both be None (nothing to "
                         "differentiate)")
    if isinstance(grad_position, bool) or not (
            grad_position is None or isinstance(grad_position, int) or
            isinstance(grad_position, tuple) and
            all(isinstance(p, int) and not isinstance(p, bool) for p in grad_position)):
        raise TypeError(f"grad: grad_position must be an int, a tuple of ints or None, not "
                        f"{grad_position!r}")
    if not isinstance(has_aux, bool):
        raise TypeError(f"grad: has_aux must be a bool, not {has_aux!r}")
    positions = (grad_position,) if isinstance(grad_position, int) else grad_position
    if positions is not None:
        if not positions:
            raise ValueError("grad: grad_position is an empty tuple (nothing to differentiate)")
        if any(p < 0 for p in positions):
            raise ValueError(f"grad: grad_position must be >= 0, got {grad_position!r}")
        if len(set(positions)) != len(positions):
            raise ValueError(f"grad: grad_position {grad_position!r} repeats a position")
    found, single = (None, False) if weights is None else _weights(weights)
    return GradRequest(positions, isinstance(grad_position, int), found, has_aux, value, False,
                       single)


def _weights(weights: Any) -> tuple[tuple[Parameter, ...], bool]:
    """The Parameters to differentiate, and whether one was given bare (its gradient is then
    returned bare, as MindSpore does)."""
    single = isinstance(weights, np.ndarray)
    try:
        items = (weights,) if single else tuple(weights)
    except TypeError:
        raise TypeError(f"grad: weights must be a Parameter, a list or a ParameterTuple, not a "
                        f"{type(weights).__name__}") from None
    for i, w in enumerate(items):
        if not isinstance(w, Parameter):
            raise TypeError(f"grad: weights[{i}] is a {type(w).__name__}, not a Parameter "
                            "(pass net.trainable_params() or a ParameterTuple)")
    return items, single


class GradFunction(JitBase):
    """The compiled gradient function of one `fn` (`__wrapped__`: a function, a Cell, or
    another gradient function: grad of grad) and request. Called inside compiled code, the
    frontend compiles it into the caller's graph instead (`__amber_gradient__`)."""

    def __init__(self, fn: Any, spec: GradRequest, options: CompileOptions | None = None) -> None:
        super().__init__(False, options)
        forward = fn.__wrapped__ if isinstance(fn, JitFunction) else fn
        self.__wrapped__ = forward
        self._spec = spec
        self._roots = None if isinstance(forward, Cell | GradFunction) else RootOf(forward)

    @property
    def _instance(self) -> Any:
        """What the compiled code reads Parameters from: the Cell differentiated, or the
        cells and Parameters a plain function reaches (None if it reaches none)."""
        forward = self.__wrapped__
        if isinstance(forward, Cell):
            return forward
        if isinstance(forward, GradFunction):
            return forward._instance
        return self._roots.get()

    @property
    def __amber_gradient__(self) -> tuple[Any, GradRequest]:
        return self.__wrapped__, self._spec

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._spec.sens and "sens" in kwargs:  # NOTE: MindSpore also takes sens by keyword
            kwargs = dict(kwargs)
            args = (*args, kwargs.pop("sens"))
        try:
            return as_results(self._run(self._instance, args, kwargs))
        except CompileError as err:
            raise user_facing(err)  # AMBER_TRACEBACK_FILTERING=off shows amber's frames too

    # -- what jit asks of its targets -----------------------------------------------------------
    def _target(self, instance: Any) -> Any:
        forward = self.__wrapped__
        if isinstance(forward, Cell):
            return forward
        # NOTE: grad of grad compiles a call of the inner gradient function, which the
        # frontend differentiates in place (this function's own transform runs on the
        # result); a plain function reaching cells is called as a method of their root.
        if isinstance(forward, GradFunction):
            forward = with_user_code(fixed_closure(_calling(forward), forward),
                                     user_code(self._function(instance)))
        if instance is None:
            return forward
        if isinstance(instance, Cell) and not isinstance(instance, FunctionRoot):
            method = fixed_closure(_calling_method(forward), forward)
            return types.MethodType(with_user_code(method, user_code(self._function(instance))),
                                    instance)
        return FunctionWithRoot(forward, instance)

    def _function(self, instance: Any) -> Any:
        forward = self.__wrapped__
        if isinstance(forward, GradFunction):
            return forward._function(instance)
        return type(forward).construct if isinstance(forward, Cell) else forward

    def _title(self, instance: Any) -> str:
        forward = self.__wrapped__
        if isinstance(forward, GradFunction):
            return f"grad_{forward._title(instance)}"
        name = f"{type(forward).__qualname__}.construct" if isinstance(forward, Cell) else \
            getattr(forward, "__qualname__", "function")
        return f"grad_{name}"

    def _cache_token(self, options: CompileOptions) -> str:
        return f"{options.cache_token()} {self._token()}"

    def _token(self) -> str:
        """This gradient function's request (and its inner one's) in words stable across
        processes."""
        spec = self._spec
        weights = None
        if spec.weights is not None:  # NOTE: which weights, named stably across processes
            names = {id(p): n for n, p in self._instance.parameters_and_names()}
            weights = [names.get(id(w), "?") for w in spec.weights]
        parts = (spec.positions, spec.single, weights, spec.has_aux, spec.value, spec.sens,
                 spec.single_weight)
        inner = self.__wrapped__._token() if isinstance(self.__wrapped__, GradFunction) else ""
        return f"grad{parts!r}{inner}"

    def _cache_key(self, instance: Any, key: Hashable) -> Hashable:
        return key

    def _eager(self, instance: Any, args: tuple, kwargs: dict) -> Any:
        from ..graph.interpreter import run_graph
        artifact = self._artifact(instance, args, kwargs, CompileOptions(0), "", "",
                                  interpret=True)
        graph = artifact.graph
        values = [access(instance, p)[1] for p in graph.param_paths]
        values += [_argument(args, kwargs, path) for path in graph.input_paths]
        return run_graph(graph, *values)

    def _artifact(self, instance: Any, args: tuple, kwargs: dict, options: CompileOptions,
                  title: str, signature: str, interpret: bool = False,
                  shapes: dict[str, tuple] | None = None) -> Artifact:
        spec = self._spec
        forward_args = args[:-1] if spec.sens else args
        if spec.sens and not args:
            raise TypeError(f"{self._title(instance)}: sens_param=True needs the output's "
                            "adjoint as the last argument")
        return compile_target(self._target(instance), forward_args, kwargs, options, title=title,
                              signature=signature,
                              transform=lambda graph: self._differentiate(graph, instance,
                                                                          len(forward_args)),
                              optimize_graph=not interpret, shapes=shapes)

    def _differentiate(self, graph: Any, instance: Any, nargs: int) -> None:
        from ..graph.autodiff import NotDifferentiable
        from ..graph.gradient import GradSpec, GradSpecError, grad_graph
        spec = self._spec
        weights = None if spec.weights is None else _resolve_weights(graph, instance,
                                                                      spec.weights)
        full = GradSpec(spec.positions, spec.single, weights, spec.has_aux, spec.value,
                        spec.sens, spec.single_weight)
        try:
            grad_graph(graph, full, nargs)
        except GradSpecError as err:
            raise _error(str(err), err.loc, err.hint) from None
        except NotDifferentiable as err:
            raise _error(f"cannot differentiate this line: {err}", err.loc,
                         "use ops.stop_gradient where no gradient should flow, or rewrite it "
                         "with ops that have gradients") from None

    def __repr__(self) -> str:
        # NOTE: with its address: a guard on a gradient function is by identity, so compiled
        # code guarded by one is never stored on disk (another process has another object)
        return f"<amber grad function of {self._title(self._instance)} at {id(self):#x}>"


@dataclass(frozen=True)
class GradientBuild:
    """What `amber dump --grad` shows: the gradient graph before the optimizing passes (the
    forward after the cleanups, then the backward), the sources compiled, and the arguments it
    was built for (with an example sensitivity when the output is not a scalar)."""
    graph: Any
    sources: tuple[Any, ...]
    args: tuple
    request: str


def gradient_build(target: Any, args: tuple) -> GradientBuild:
    """The gradient `amber dump --grad` shows for `target` (a Cell or a function) called with
    `args`: `GradOperation(get_all=True, get_by_list=<it has trainable Parameters>,
    sens_param=<its output is not a scalar>)`, built as its compiled form would be."""
    from ..graph.types import Scalar, Tensor
    forward = compile_target(target, args, {}, CompileOptions(0), optimize_graph=False)
    (out,) = forward.graph.outputs
    scalar = isinstance(out.type, Scalar) or (
        isinstance(out.type, Tensor) and all(d == 1 for d in out.type.shape))
    weights = list(target.trainable_params()) if isinstance(target, Cell) else []
    op = GradOperation(get_all=True, get_by_list=bool(weights), sens_param=not scalar)
    gradient = op(target, weights) if weights else op(target)
    call_args = args if scalar else (*args, _ones(out.type))
    built = gradient._artifact(gradient._instance, call_args, {}, CompileOptions(0), "", "",
                               interpret=True)
    return GradientBuild(built.graph, built.sources, call_args, repr(op))


def _ones(t: Any) -> Any:
    """An example sensitivity: ones shaped like a value of type `t`."""
    from ..graph.types import Tensor, TupleType
    if isinstance(t, TupleType):
        return tuple(_ones(e) for e in t.elements)
    if isinstance(t, Tensor) and t.is_static:
        return np.ones(t.shape, t.dtype)
    raise TypeError(f"cannot make an example sensitivity for an output of type {t}")


def fixed_closure(wrapper: Any, function: Any) -> Any:
    """`wrapper` (calling `function`) with its closure guarded in memory only
    (FIXED_CLOSURE_ATTR) when the disk key names all that `function` holds: a chain of gradient
    and transform functions ending at a plain function (its name and source) or a Cell (the
    compiled instance). A bound method of another object, or a callable object, carries state
    no key names: then the closure guard keeps the entry off the disk."""
    inner = function
    while hasattr(type(inner), GRADIENT_ATTR) or hasattr(type(inner), TRANSFORM_ATTR):
        inner = inner.__wrapped__
    if isinstance(inner, types.FunctionType | Cell):
        setattr(wrapper, FIXED_CLOSURE_ATTR, True)
    return wrapper


def user_code(function: Any) -> Any:
    """The code object of the user's function (through a bound method), or None (an op)."""
    return getattr(getattr(function, "__func__", function), "__code__", None)


def with_user_code(wrapper: Any, code: Any) -> Any:
    """`wrapper` shown as the user's function `code` in generated code (USER_CODE_ATTR)."""
    if code is not None:
        setattr(wrapper, USER_CODE_ATTR, code)
    return wrapper


def _calling(function: Any) -> Any:
    """A function calling `function` (grad of grad compiles a call of the inner gradient)."""
    def call_gradient(*args):  # type: ignore[no-untyped-def]
        return function(*args)
    return call_gradient


def _calling_method(function: Any) -> Any:
    """A method calling `function`, bound to the Cell its Parameters are read from."""
    def call_gradient(self, *args):  # type: ignore[no-untyped-def]
        return function(*args)
    return call_gradient





def _resolve_weights(graph: Any, instance: Any, weights: Iterable[Parameter]) -> tuple:
    """Each weight as a `Weight`: the paths the graph reads it by, found by identity (none for
    a Parameter the function does not use: its gradient is zeros)."""
    from ..graph.gradient import Weight
    by_id: dict[int, list[str]] = {}
    for path in graph.param_paths:
        by_id.setdefault(id(access(instance, path)[1]), []).append(path)
    return tuple(Weight(tuple(by_id.get(id(w), ())), tuple(np.shape(w)), np.dtype(w.dtype).str)
                 for w in weights)


def _argument(args: tuple, kwargs: dict, path: str) -> Any:
    head, _, rest = path.partition(".")
    value = args[int(head)] if head.isdigit() else kwargs[head]
    return access(value, rest)[1] if rest else value


def _error(message: str, loc: Loc | None, hint: str) -> CompileError:
    if loc is None:
        return CompileError(message, hint=hint)
    text = loc.text or linecache.getline(loc.file, loc.line)
    return CompileError(message, loc.file, loc.line, loc.col, text, hint)

