"""The state of one build shared by the functions it inlines: `Compiler` (the graph, its
inputs, guards, sources, the inlining stack). Each function being built is a `context.Frame`."""
from __future__ import annotations

import itertools
import linecache
import types
from typing import Any

import gast
import numpy as np

from ..common.markers import USER_CODE_ATTR
from ..graph import AnyType, Block, Builder, Graph, InsertPoint, Loc, Node, Value
from ..graph.analysis import writes_an_array
from ..graph.types import Type, type_of
from ..nn.cell import Cell
from . import names
from .aliases import Memory, note_input
from .canonicalize import canonicalize, result_body, returns_none
from .check import check_supported
from .context import Frame, Prepared, Rules, call_identity, nested_reads
from .effects import declared_globals, enter_frame, stored_attributes
from .generators import inline_generators
from .guards import (CodeReader, Guard, MethodReader, PlaceReader, SameObjectReader,
                     bound_function, code_of)
from .scope import global_value
from .source import parse_function
from .values import Ref


class Compiler:
    """Everything shared by the functions of one `build_graph` call."""

    def __init__(self, graph: Graph, root: Any, rules: Rules) -> None:
        self.withs = 0
        """With statements built so far (each names its manager `__amber_with<k>`)."""
        self.watched = 0
        """How many try blocks are around the code being built (an op failing there raises
        when the code runs, where it may be caught)."""
        self.graph = graph
        self.rules = rules
        self.builder = Builder(InsertPoint.at_end(graph.body))
        self.root = root
        self.params: dict[str, Value] = {}
        self._param_owners: dict[int, str] = {}
        """id of an instance array -> the first path it was read by (see `param`)."""
        self.inputs: list[tuple[str, Value]] = []
        self.guards: dict[str, Guard] = {}
        self.sources: list[str] = []
        self.source_titles: list[str] = []
        """The qualified name of each function in `sources` (`Conv2d.construct`)."""
        self.stack: list[tuple[tuple[types.CodeType, int | None], str]] = []
        """The functions being inlined, outermost first: (code, id of the bound receiver or
        None) and a name for messages. A call is recursive when its pair is already here."""
        self.frames: list[Frame] = []
        self.signatures: list[Any] = []
        """Per entry of `stack`: what was known of its call's arguments (see `is_active`)."""
        self.named: dict[Value, int] = {}
        """See `Scope.named`."""
        self.memory = Memory()
        self.numbers: dict[Value, frozenset[Type]] = {}
        """Values that may hold a number of another type at run time than their type says, with
        those types: a variable that is `0` on one path and an array on another (`s = 0`
        before `s = s + x` in a loop that may not run) joins to the array type, one that is
        `0` on one path and `0.5` on another to float, and generated code holds whichever the
        path made. Their dtype, shape and class are known only at run time
        (`Frame.number_facts`), and an op whose result's type would differ is refused."""
        self.layer_choices = 0
        """Above 0 while a loop that cannot be unrolled is built again: a run-time index into
        a sequence of layers then picks the layer with an If per layer (`IndexesLayers`)."""
        self.loop_seeds: list[Any] = []
        """The `seeds.Seeds` of the loop regions being built, innermost last."""
        self.last_effect: dict[Block, Node] = {}
        self.array_writes = 0
        """How many in-place writes into arrays were built so far (program order)."""
        self.vjp_reruns: list[tuple[Block, Block, Any]] = []
        """(block of the call, block of its ops.vjp, the call's error maker) for each
        `vjp_fn(v)` that runs the forward again: a loop around the call but not the `ops.vjp`
        must not write arrays in place (frontend/carries.after_loop checks)."""
        self.failure: tuple[Frame, gast.AST] | None = None
        self.foreign: dict[int, tuple[Any, str]] = {}
        """id -> (object, where it comes from) for compile-time lists and dicts that belong to
        the caller (arguments, attributes, globals, default values): compiled code cannot
        change them for the caller, so writing into them is refused (see `Frame.writable`)."""
        self._prepared: dict[types.CodeType, Prepared] = {}
        self.nested: dict[gast.AST, Prepared] = {}
        """Functions defined inside compiled code, prepared (see `closures.prepare`)."""
        self.owners: dict[int, tuple[Any, Any]] = {}
        """id -> (compile-time list or dict, its `effects.Owner`) for the caller's containers
        compiled code may write: each write is made to the caller's object too."""
        self.handles: dict[int, Value] = {}
        """id of a caller's object -> the graph value holding it at run time."""
        self.caller_states: dict[Any, tuple[str, Any]] = {}
        """id of a caller's list or dict, or (id, name) of a cell's attribute compiled code
        stores -> (the scope name holding what compiled code made of it at each point, so
        branches merge it and loops carry it, see `effects.own`; its `effects.Owner`)."""
        self.mutated_lists: dict[Any, frozenset[str]] = {}
        """Function AST -> the attribute and global names whose list it changes in place."""
        self.live_attributes: dict[tuple[int, str], str] = {}
        """(id, name) -> kind of the cells' Python numbers compiled code reads when it runs
        (it writes them too, see effects.read_attribute)."""
        self.global_writers: dict[tuple[str, str], Any] = {}
        self.global_types: dict[tuple[str, str], set] = {}
        """(module, name) -> the types compiled code stored in the global."""
        """(module, name) -> the frame whose `global` statement writes it."""
        self.rebinding: list[Any] = []
        """The frames whose variables a running nested function rebinds (`nonlocal`), innermost
        last: their scopes are stale until it returns (see `closures.call_closure`)."""
        self._paths: dict[int, str] | None = None
        self.guards_methods = True
        """Whether inlined methods are guarded (`_guard_method`): not when the runtime calls
        the code without the root object (a bound method compiled on its own)."""
        self.comprehensions = 0
        """How many comprehensions were built as loops (each names its variables after it)."""

    def push_frame(self, func: types.FunctionType, receiver: Any = None,
                   signature: Any = None) -> Frame:
        """A new frame for `func` (a method when `receiver` is the object it runs on), on top
        of the call stack (`pop_frame` takes it off). `signature`: what the compiler knows of
        the call's arguments (see `is_active`)."""
        frame = Frame(self, func, self.prepare(func))
        self._guard_method(func, receiver)
        if self.frames:  # NOTE: an inlined call: its lines remember the line calling it
            frame.caller = self.builder.loc
        else:
            frame.caller = _user_def_line(func)
        self.frames.append(frame)
        self.stack.append((call_identity(func, receiver), func.__qualname__))
        self.signatures.append(signature)
        enter_frame(frame, global_value)
        return frame

    def _guard_method(self, func: types.FunctionType, receiver: Any) -> None:
        """Guard that the class of `receiver` (the compiled instance or a cell under it) still
        has `func` as its method, running the same code (see `MethodReader`); for any other
        function, that it runs the same code (`CodeReader`)."""
        obj = path = name = None
        if not self.guards_methods:
            pass
        elif receiver is self.root and receiver is not None:
            obj, path = receiver, ""
        elif isinstance(receiver, Ref) and receiver.arg is None and receiver.path is not None:
            obj, path = receiver.obj, receiver.path
        if obj is not None:
            name = _method_name(type(obj), func)
        if name is None:  # NOTE: a plain function (or a helper passed self): its code alone
            self.guard(f"{func.__module__}.{func.__qualname__}.__code__ (id {id(func)})",
                       CodeReader(func), func.__code__)
            place = PlaceReader(func.__module__, func.__qualname__)
            if bound_function(func.__module__, func.__qualname__) is func:
                self.guard(f"where {func.__module__}.{func.__qualname__} is defined", place,
                           place(None))
            return
        owner = f"self.{path}" if path else "self"
        self.guard(f"type({owner}).{name}", MethodReader(path, name),
                   (getattr(type(obj), name), func.__code__))

    def pop_frame(self) -> None:
        self.frames.pop()
        self.stack.pop()
        self.signatures.pop()

    def is_active(self, func: types.FunctionType, receiver: Any = None,
                  signature: Any = None) -> bool:
        """True if `func` on `receiver` is already being inlined with arguments the compiler
        cannot tell apart (the same compile-time values and run-time types, `signature`):
        inlining it again would never end. A recursion whose compile-time arguments change
        (a depth counting down, a shape shrinking) is inlined level by level."""
        identity = call_identity(func, receiver)
        return any(entry == identity and (signature is None or known is None
                                          or known == signature)
                   for (entry, _), known in zip(self.stack, self.signatures))

    def prepare(self, func: types.FunctionType) -> Prepared:
        """Parse, check and canonicalize `func` (once per build)."""
        code = func.__code__
        prepared = self._prepared.get(code)
        if prepared is None:
            parsed = parse_function(func)
            check_supported(parsed)
            parsed = inline_generators(parsed, self._note_generator)
            fdef = canonicalize(parsed)
            params = _parameter_names(fdef.args)
            declared = declared_globals(fdef)
            local = frozenset(params | names.assigned_names(fdef.body)) - declared
            prepared = Prepared(parsed, fdef, local, returns_none(parsed.node),
                                result_body(parsed, fdef), nested_reads(fdef), declared,
                                stored_attributes(fdef))
            self._prepared[code] = prepared
        if prepared.parsed.source not in self.sources:
            self.sources.append(prepared.parsed.source)
            self.source_titles.append(func.__qualname__)
        return prepared

    def save_writes(self) -> tuple[dict, ...]:
        """What the build knows of the caller's objects it writes (see `Mark`)."""
        return (dict(self.owners), dict(self.handles), dict(self.live_attributes),
                dict(self.caller_states))

    def restore_writes(self, saved: tuple[dict, ...]) -> None:
        """Back to `save_writes`' state: a statement built again writes again, from there."""
        for mine, before in zip((self.owners, self.handles, self.live_attributes,
                                 self.caller_states), saved):
            mine.clear()
            mine.update(before)

    def _note_generator(self, func: types.FunctionType) -> None:
        """A generator inlined into a consumer's source: its code is guarded and its source
        is part of the cache key, as an inlined call's are."""
        self._guard_method(func, None)
        source = parse_function(func).source
        if source not in self.sources:
            self.sources.append(source)
            self.source_titles.append(func.__qualname__)

    def mark_foreign(self, obj: Any, where: str) -> Any:
        """Record that the list or dict `obj` belongs to the caller (`where`); returns it."""
        self.foreign.setdefault(id(obj), (obj, where))
        return obj

    def guard(self, description: str, read: Any, expected: Any) -> None:
        """Record that the graph depends on a compile-time value."""
        if description not in self.guards:
            self.guards[description] = Guard(description, read, expected)

    def param(self, path: str, value: Any) -> Value:
        """The graph input carrying the instance's array (or generator) at `path`."""
        found = self.params.get(path)
        if found is None and isinstance(value, np.ndarray):
            # NOTE: one array reached by two paths (an optimizer's ParameterTuple holding the
            # network's weights) is one graph input, so a write through one path is seen by
            # reads through the other; a guard keeps the paths the same object.
            first = self._param_owners.setdefault(id(value), path)
            if first != path:
                self.guard(f"self.{path} is self.{first}", SameObjectReader(path, first), True)
                return self.params[first]
        if found is None:
            t = AnyType() if isinstance(value, np.random.Generator) else type_of(value)
            found = self.graph.body.add_param(t, path.replace(".", "_"))
            note_input(self.memory, found, value)
            self.params[path] = found
        return found

    def path_of(self, obj: Any) -> str | None:
        """The attribute path of a cell or Parameter under the compiled instance, found by
        identity (for objects reached without a path, like the layers of `self.seq[1:]`)."""
        if self._paths is None:
            self._paths = {}
            if isinstance(self.root, Cell):
                for name, param in self.root.parameters_and_names():
                    self._paths.setdefault(id(param), name)
                for name, cell in self.root.cells_and_names():
                    self._paths.setdefault(id(cell), name)
        return self._paths.get(id(obj))

    def note_effect(self, node: Node) -> None:
        """Order an effectful node after the previous one of its block (a control edge)."""
        block = node.parent
        previous = self.last_effect.get(block)
        if previous is not None and previous is not node and previous not in node.control_inputs:
            node.control_inputs.append(previous)
        self.last_effect[block] = node
        if writes_an_array(node):
            self.array_writes += 1


def _method_name(cls: type, func: types.FunctionType) -> str | None:
    """The name under which `cls` has `func` as its method (a lambda assigned to a class
    attribute is named `<lambda>`: the class's namespaces are searched), else None."""
    names = itertools.chain((func.__name__,), (n for k in cls.__mro__ for n in vars(k)))
    for name in names:
        try:
            if code_of(getattr(cls, name, None)) is func.__code__:
                return name
        except Exception:  # NOTE: a class attribute whose descriptor fails: not this one
            continue
    return None


def _parameter_names(args: gast.arguments) -> set[str]:
    """The names a function's parameters bind (not the names their annotations read)."""
    found = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return {a.id for a in found if isinstance(a, gast.Name)}


def _user_def_line(func: Any) -> Loc | None:
    """For one of amber's call wrappers (USER_CODE_ATTR), the `def` line of the user's function
    it runs: the wrapper's own lines are shown as that line, not as amber's."""
    code = getattr(func, USER_CODE_ATTR, None)
    if code is None:
        return None
    text = linecache.getline(code.co_filename, code.co_firstlineno).strip()
    return Loc(code.co_filename, code.co_firstlineno, 0, text)
