"""`build_graph`: the frontend's entry point. Compiles a cell's `construct` (or a plain
function) for one call's arguments into a verified `Graph`, with the guards it relies on."""
from __future__ import annotations

import inspect
import sys
import types
from dataclasses import dataclass
from typing import Any

import gast
import numpy as np

from ..graph import AnyType, Graph, InsertPoint, Tensor
from ..graph.ir import Loc
from ..graph.types import same_tuple_kind
from ..graph.verifier import IRVerifyError, verify
from ..nn.cell import Cell
from . import (calls, effects, closures, contexts, control, exceptions, expressions, loops,
               statements)
from .aliases import note_input
from .canonicalize import own_returns
from .compiler import Compiler
from .context import DeadPath, Frame, Prepared, Rules
from .errors import CompileError, CompileTypeError, arity_message
from .targets import FunctionWithRoot
from .guards import Guard
from .scope import bind_arguments
from .source import error_at
from .values import ArgRoot, PyList, Ref, jit_wrapped

RULES = Rules(
    expressions={**expressions.HANDLERS, **calls.HANDLERS, **closures.EXPRESSIONS},
    statements={**statements.HANDLERS, **control.HANDLERS, **loops.HANDLERS,
                **exceptions.HANDLERS, **contexts.HANDLERS,
                **closures.STATEMENTS, **effects.STATEMENTS},
    evaluate=expressions.evaluate, condition=expressions.condition,
    run_block=statements.run_block, run_function=statements.run_function,
    assign=statements.assign_target, call=calls.call_value,
    writes_through=effects.check_write, replaced=effects.replaced,
    caller_view=effects.caller_view)
"""The handler tables the frontend's modules declare, assembled once (see `Rules`)."""

SCALARS = (bool, int, float, str, type(None))
CALLABLES = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, np.ufunc, type)
"""Functions and classes an argument may be (`f(x, np.tanh)`, `f(n, range)`): called while
compiling like any other."""
RECURSION_LIMIT = 4000
"""The frontend recurses once per nesting level of the user's code (a long `elif` chain is
that many nested ifs): it may go this deep while building."""


@dataclass(frozen=True)
class BuildResult:
    """A compiled graph plus what the runtime needs to reuse it safely."""
    graph: Graph
    guards: tuple[Guard, ...]
    sources: tuple[str, ...]
    """Source text of every function compiled or inlined (part of the cache key)."""
    source_titles: tuple[str, ...] = ()
    """The qualified name of each function in `sources` (`Conv2d.construct`)."""


def build_graph(target: Any, args: tuple, kwargs: dict | None = None, *,
                fallback: bool = False, shapes: dict[str, tuple] | None = None) -> BuildResult:
    """Compile `type(target).construct` with self=target (a Cell) or a plain function `target`
    for a call with `args` and `kwargs`. Raises CompileError for anything it cannot compile.
    (`fallback` is accepted for the runtime, which implements falling back to eager mode.)
    `shapes` maps an array argument's input path (`0`, `x`, `1.2`) to the shape its type
    takes instead of the example's: symbolic sizes (`("N", 1, 32, 32)`) make code for every
    value of them."""
    if isinstance(target, Cell):
        # NOTE: `construct` itself may be decorated with `amber.jit` (MindSpore 2.x style)
        func, root = jit_wrapped(type(target).construct) or type(target).construct, target
        name = f"{type(target).__name__}.construct"
    elif isinstance(target, types.MethodType) and isinstance(target.__self__, Cell):
        func, root = target.__func__, target.__self__
        name = f"{type(root).__name__}.{func.__name__}"
    elif isinstance(target, FunctionWithRoot):  # a function reading its globals' cells
        func, root = target.function, target.root
        name = getattr(func, "__qualname__", "function")
    elif isinstance(target, types.FunctionType | types.MethodType):
        func, root = target, None
        name = getattr(target, "__qualname__", "function")
    else:
        raise CompileError(f"cannot compile a {type(target).__name__}: pass a Cell or a "
                           "Python function", hint="decorate a Cell subclass or a def")
    compiler = Compiler(Graph(name), root, RULES)
    # NOTE: a bound method's code is called without its object: guards cannot read it there
    compiler.guards_methods = not isinstance(target, types.MethodType)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, RECURSION_LIMIT))
    try:
        _build(compiler, func, tuple(args), dict(kwargs or {}), dict(shapes or {}),
               takes_self=not isinstance(target, FunctionWithRoot))
    except CompileError:
        raise
    except RecursionError as exc:
        raise _located(compiler, "the program is nested too deeply to compile",
                       "split deeply nested expressions into several statements") from exc
    except Exception as exc:  # NOTE: the last resort; every cause found is fixed at its source
        raise _located(compiler, f"internal error while compiling this line "
                       f"({type(exc).__name__}: {exc})",
                       "please report it; rewriting the line differently may avoid it") from exc
    finally:
        sys.setrecursionlimit(limit)
    return BuildResult(compiler.graph, tuple(compiler.guards.values()),
                       tuple(compiler.sources), tuple(compiler.source_titles))


def _located(compiler: Compiler, message: str, hint: str) -> CompileError:
    """A CompileError at the innermost node being built when things went wrong."""
    if compiler.failure is not None:
        frame, node = compiler.failure
    elif compiler.frames:
        frame = compiler.frames[-1]
        node = frame.at or frame.stmt or frame.fdef
    else:
        return CompileError(message, hint=hint)
    line = frame.parsed.lines[node.lineno - 1].strip() if getattr(node, "lineno", 0) else ""
    return error_at(frame.parsed, node, message.replace("this line", f"`{line}`"), hint)


def _build(compiler: Compiler, func: Any, args: tuple, kwargs: dict,
           shapes: dict[str, tuple], takes_self: bool) -> None:
    if isinstance(func, types.MethodType):
        self_value, func = func.__self__, func.__func__
        args = (self_value, *args)
    # NOTE: kept on the stack: errors name its position; bound to the root cell, so a
    # construct that calls the root again is reported as recursion
    frame = compiler.push_frame(func, compiler.root if takes_self else None)
    bound = _bind_inputs(compiler, frame, func, args, kwargs, shapes, takes_self)
    for name, value in bound.items():
        frame.scope.bind(name, value, frame.fdef.lineno)
    try:
        result = frame.run_function()
    except DeadPath:
        result = None  # every path raises; the graph still returns one value
    compiler.builder.ip = InsertPoint.at_end(compiler.graph.body)
    output = frame.materialise(result, "result")
    compiler.graph.body.set_results([output])
    if frame.caller is None:  # NOTE: amber's call wrapper: the result's own line is the user's
        _record_return_line(compiler, compiler.prepare(func))
    _finish(compiler)


def _record_return_line(compiler: Compiler, prepared: Prepared) -> None:
    """Tell codegen where the user's `return` is, when the function ends with one (an early
    return elsewhere makes the canonical return synthetic: no single line to name)."""
    parsed = prepared.parsed
    last = parsed.node.body[-1]
    early = len(own_returns(parsed.node.body)) > 1
    if isinstance(last, gast.Return) and not early:
        text = parsed.lines[last.lineno - 1].strip() if last.lineno <= len(parsed.lines) else ""
        compiler.graph.return_loc = Loc(parsed.file, last.lineno, last.col_offset, text)


def _bind_inputs(compiler: Compiler, frame: Frame, func: Any, args: tuple, kwargs: dict,
                 shapes: dict[str, tuple], takes_self: bool = True) -> dict[str, Any]:
    """Bind the call's arguments to the function's parameters; arrays become graph inputs."""
    # NOTE: a functools.wraps wrapper is compiled itself, so its own signature binds
    signature = inspect.signature(func, follow_wrapped=False)
    params = list(signature.parameters.values())
    converted: list[Any] = []
    offset = 0
    if compiler.root is not None and takes_self:
        converted.append(Ref(compiler.root, ""))
        offset = 1
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    for i, arg in enumerate(args):
        hint = positional[i + offset].name if i + offset < len(positional) else f"arg{i}"
        converted.append(_input(compiler, frame, arg, str(i), hint, shapes))
    named = {k: _input(compiler, frame, v, k, k, shapes) for k, v in kwargs.items()}
    try:
        bound = signature.bind(*converted, **named)
    except TypeError as exc:
        skip = 1 if compiler.root is not None else 0
        err = frame.error(arity_message(func.__qualname__, func, len(args) + len(kwargs),
                                        str(exc), skip),
                          "pass the arguments it declares", node=frame.fdef,
                          kind=CompileTypeError)
        err.at_call = True  # NOTE: the runtime moves it to the user's call
        raise err from None
    return bind_arguments(frame, func, bound)


def _input(compiler: Compiler, frame: Frame, value: Any, path: str, hint: str,
           shapes: dict[str, tuple]) -> Any:
    """One call argument: arrays become graph inputs; Python values stay compile-time."""
    if isinstance(value, np.ndarray | np.generic):
        if value.dtype == object:
            raise frame.error(f"argument {path} is an object array", node=frame.fdef)
        shape = shapes.get(path, np.shape(value))
        assert len(shape) == np.ndim(value), f"argument {path}: shape {shape} for {value.shape}"
        v = compiler.graph.body.add_param(Tensor(shape, value.dtype), hint)
        note_input(compiler.memory, v, value)
        compiler.inputs.append((path, v))
        return v
    if isinstance(value, np.random.Generator):
        v = compiler.graph.body.add_param(AnyType(), hint)
        compiler.inputs.append((path, v))
        return v
    if isinstance(value, SCALARS):
        return value
    if isinstance(value, tuple | list):
        items = [_input(compiler, frame, x, f"{path}.{i}", f"{hint}_{i}", shapes)
                 for i, x in enumerate(value)]
        if isinstance(value, tuple):
            return same_tuple_kind(value, items)  # NOTE: a namedtuple argument stays one
        model = compiler.mark_foreign(PyList(items), f"argument {hint}")
        return effects.own(frame, model, effects.Owner(value, f"argument {hint}", "arg", path))
    if isinstance(value, dict):
        model = compiler.mark_foreign(
            {k: _input(compiler, frame, x, f"{path}.{k}", f"{hint}_{k}", shapes)
             if _spellable(k) else _unnamed(frame, x, f"{path}[{k!r}]")
             for k, x in value.items()},
            f"argument {hint}")
        return effects.own(frame, model, effects.Owner(value, f"argument {hint}", "arg", path))
    if isinstance(value, Cell):  # NOTE: its arrays become inputs by path, e.g. `1.fc.weight`
        return Ref(value, path, ArgRoot(value, path, hint))
    if isinstance(value, CALLABLES):
        return value  # NOTE: a compile-time value: the runtime specializes on its identity
    raise frame.error(f"argument {path} is a {type(value).__name__}, which compiled code "
                      "cannot take", "pass arrays, Python numbers, strings, None, cells, or "
                      "tuples, lists and dicts of them", node=frame.fdef)


def _spellable(key: Any) -> bool:
    """A dict key that can be part of an input path (`0.key`)."""
    return isinstance(key, str) and key != "" and "." not in key and not key.isdigit()


def _unnamed(frame: Frame, value: Any, where: str) -> Any:
    """An item of a dict argument under a key no input path can name: compile-time only."""
    if isinstance(value, SCALARS) or isinstance(value, tuple) and all(
            isinstance(x, SCALARS) for x in value):
        return value
    raise frame.error(f"argument {where} holds a {type(value).__name__}, but only string keys "
                      "without dots may hold arrays or cells", "use such keys, e.g. 'weight'",
                      node=frame.fdef)


def _finish(compiler: Compiler) -> None:
    """Put parameters first among the graph inputs, record paths, and verify."""
    graph = compiler.graph
    params = list(compiler.params.values())
    inputs = [v for _, v in compiler.inputs]
    graph.body.set_params(params + inputs)
    graph.param_paths = tuple(compiler.params)
    graph.input_paths = tuple(path for path, _ in compiler.inputs)
    try:
        verify(graph)
    except IRVerifyError as exc:
        raise _located(compiler, "internal error: the graph built for this function is "
                       "invalid", "please report it") from exc

