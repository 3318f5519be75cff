"""The state of one build: `Compiler` (the graph, its inputs, guards, sources, the inlining
stack) and `Frame` (one function being built: its source, symbol table and position)."""
from __future__ import annotations

import itertools
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import gast
import numpy as np

from ..graph import (AnyType, Block, Builder, Graph, InsertPoint, ListType, Loc, Node, Scalar,
                     Tensor, TupleType, Type, Value, join_types)
from ..graph.types import tuple_class, tuple_of_class, type_of
from ..nn.cell import Cell
from ..ops import OpDef, lookup
from ..ops import python as pyops
from . import names
from .aliases import Memory, after_write, note_input, note_result
from .canonicalize import canonicalize, result_body, returns_none
from .check import check_supported
from .generators import inline_generators
from .errors import CompileError, kind_for
from .guards import CodeReader, Guard, MethodReader, SameObjectReader, code_of
from .source import ParsedFunction, error_at, parse_function
from .values import MISSING, PENDING, Instance, PyList, Ref, Unusable, describe, kind_name

"""The op of a name's value on a path that never bound it."""
INFER_ERRORS = (TypeError, ValueError, IndexError, ArithmeticError)
"""What an op's `infer` raises when its inputs do not fit: reported at the user's line."""


class DeadPath(Exception):
    """Control never gets past this point (a `raise` was compiled): stop building the path."""


class MergeConflict(CompileError):
    """A variable holds values of different kinds (None and a tensor, different ranks or
    dtypes) on the two sides of an `if`: the statements after it are built once per side
    instead; otherwise this is the user's error."""


class NeedsUnrolling(CompileError):
    """A loop body that one region cannot express: it indexes a compile-time sequence (a
    CellList, a tuple of layers) by the loop index, or a carried variable changes kind or
    dtype between iterations. An enclosing `for` over a short constant range is unrolled
    instead; otherwise this is the user's error."""


class IndexesLayers(NeedsUnrolling):
    """A loop body calls a layer (or function) picked from a compile-time sequence by a
    run-time index: unrolled when the loop can be, else built again with the index choosing
    the layer at run time (`Compiler.layer_choices`)."""


class KindChanges(NeedsUnrolling):
    """A carried variable's kind, dtype or rank changes in an iteration (int32 -> float64, as
    NumPy promotes; a vector becomes its sum; None becomes an array): the loop is built as its
    first iteration, under a run-time test that it runs, followed by the loop over the rest
    (`loops._peel_while`, `loops._peel_for`), at most `loops.MAX_PEELS` times."""


# NOTE: speculation and rollback. Building structured SSA from Python finds some facts only
# after building both ways: that a name holds different kinds of value after the two arms of
# an `if`, or that a loop body needs the loop unrolled. The frontend then raises one of the
# two exceptions above deep inside merging or widening and catches it where the statement
# began, rolls the IR and the scope back with `Mark.restore` and builds the statement another
# way. There are two such sites: `statements._run_stmt` (MergeConflict: the statements after
# the `if` are built once per side, at most `MAX_TAILS` deep) and `loops` (NeedsUnrolling,
# caught in `build_for`, which unrolls a short constant-range loop; KindChanges, caught there
# and in `build_while`, which build the first iteration before the loop; MergeConflict inside a
# loop body, caught around one widening round, which retries with wider carried types). A
# MergeConflict after a peeled loop is caught in `_run_stmt` too: the statements after the loop
# are then built on both paths (`loops.build_loop_with_tail`).


@dataclass
class Scope:
    """A symbol table: name -> run-time or compile-time value, plus the line that bound it."""
    vars: dict[str, Any] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    dead: bool = False
    depth: int = 0
    """How deep the function of this scope is inlined (0: the compiled one)."""
    named: dict[Value, int] = field(default_factory=dict)
    """Value -> the depth of the scope that gave it its name hint (shared by every scope of
    one build): a name the user's own code gives wins over a callee's (`logits`, not the
    layer's `x`)."""
    fallback: dict[str, Any] = field(default_factory=dict)
    """Values of names bound outside every function (instance arrays' first versions, see
    aliases.current), shared by every scope of one build."""

    def copy(self) -> Scope:
        return Scope(dict(self.vars), dict(self.lines), self.dead, self.depth, self.named,
                     self.fallback)

    def get(self, name: str) -> Any:
        value = self.vars.get(name, MISSING)
        return self.fallback.get(name, MISSING) if value is MISSING else value

    def bind(self, name: str, value: Any, line: int = 0) -> None:
        if isinstance(value, Value):
            deeper = self.named.get(value, self.depth) > self.depth
            hint = names.value_hint(name, value.name, replace=deeper)
            if hint != value.name:
                value.name = hint
                self.named[value] = self.depth
        self.vars[name] = value
        self.lines[name] = line

    def unbind(self, name: str) -> None:
        self.vars.pop(name, None)


@dataclass
class Prepared:
    """A function ready to build: its parse, canonical AST, local names, and its body with the
    final `return e` as `__amber_result = e` (so it can be built into both sides of an if)."""
    parsed: ParsedFunction
    fdef: gast.FunctionDef
    locals: frozenset[str]
    returns_none: bool
    body: list[gast.stmt]
    captured: frozenset[str] = frozenset()
    """Names that functions nested in this one read (see `nested_reads`)."""


class Mark:
    """The state before a statement, to build it again another way."""

    def __init__(self, f: Frame) -> None:
        self.block = f.builder.ip.block
        self.count = len(self.block.nodes)
        self.scope = f.scope.copy()
        self.effect = f.compiler.last_effect.get(self.block)

    def restore(self, f: Frame) -> None:
        added = self.block.nodes[self.count:]
        for node in added:
            node.drop_all_uses()
        for node in added:
            self.block.remove(node)
        f.scope = self.scope
        f.compiler.last_effect.pop(self.block, None)
        if self.effect is not None:
            f.compiler.last_effect[self.block] = self.effect


def tuple_items(f: Frame, v: Value) -> tuple[Value, ...]:
    """The elements of a run-time tuple value, one `tuple_getitem` each (in a tuple of its
    class: a namedtuple stays one)."""
    return tuple_of_class(v.type.cls, [f.op("tuple_getitem", v, index=i)
                                       for i in range(len(v.type.elements))])


@dataclass(frozen=True)
class Rules:
    """How a frame recurses into the handler modules: their tables and entry points,
    assembled once by `builder.py` from each module's own table, so no handler module imports
    one built on top of it (`Frame.evaluate`, `run_block`, `assign`, `call`, `run_function`)."""
    expressions: Mapping[type, Callable[[Frame, Any], Any]]
    statements: Mapping[type, Callable[[Frame, Any], None]]
    evaluate: Callable[[Frame, gast.expr], Any]
    condition: Callable[[Frame, gast.expr], Any]
    run_block: Callable[[Frame, list, frozenset], None]
    run_function: Callable[[Frame], Any]
    assign: Callable[[Frame, gast.expr, Any], None]
    call: Callable[[Frame, Any, list, dict], Any]


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
        self.failure: tuple[Frame, gast.AST] | None = None
        self.foreign: dict[int, tuple[Any, str]] = {}
        """id -> (object, where it comes from) for compile-time lists and dicts that belong to
        the caller (arguments, attributes, globals, default values): compiled code cannot
        change them for the caller, so writing into them is refused (see `Frame.writable`)."""
        self._prepared: dict[types.CodeType, Prepared] = {}
        self.nested: dict[gast.AST, Prepared] = {}
        """Functions defined inside compiled code, prepared (see `closures.prepare`)."""
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
        self.frames.append(frame)
        self.stack.append((call_identity(func, receiver), func.__qualname__))
        self.signatures.append(signature)
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
            local = frozenset(params | names.assigned_names(fdef.body))
            prepared = Prepared(parsed, fdef, local, returns_none(parsed.node),
                                result_body(parsed, fdef), nested_reads(fdef))
            self._prepared[code] = prepared
        if prepared.parsed.source not in self.sources:
            self.sources.append(prepared.parsed.source)
            self.source_titles.append(func.__qualname__)
        return prepared

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


class Frame:
    """One function being built (the compiled `construct`, or an inlined callee)."""

    def __init__(self, compiler: Compiler, func: types.FunctionType, prepared: Prepared) -> None:
        self.compiler = compiler
        self.func = func
        self.parsed = prepared.parsed
        self.fdef = prepared.fdef
        self.body = prepared.body
        self.tails = 0
        self.loop_tail: tuple[list, frozenset[str]] | None = None
        """The statements after the loop being built and the names live after them, when a
        peeled first iteration must build them (`loops.build_loop_with_tail`)."""
        self.peels: dict[int, int] = {}
        """How many first iterations of each loop (by node id) are being peeled now."""
        self.locals = prepared.locals
        self.pending_is_none = prepared.returns_none
        self.scope = Scope(depth=len(compiler.frames), named=compiler.named,
                           fallback=compiler.memory.defaults)
        self.at: gast.AST | None = None
        self.stmt: gast.AST | None = None
        self.live: tuple[list, int, frozenset[str]] | None = None
        self.caller: Loc | None = None
        """The line that called this function (None for the function being compiled)."""
        self.outer: Frame | None = None
        """For a function defined inside compiled code: the frame that defined it, whose
        variables its names fall back to."""
        self.captured = prepared.captured
        """Names a nested function may read when called: always live here."""
        self.handling: list[Value] = []
        """The exceptions of the except blocks being built around here, innermost last (what
        a bare `raise` re-raises)."""

    @property
    def builder(self) -> Builder:
        return self.compiler.builder

    # -- recursion into the handlers (see `Rules`) ---------------------------------------
    def evaluate(self, node: gast.expr) -> Any:
        """The value of expression `node` in this frame."""
        return self.compiler.rules.evaluate(self, node)

    def condition(self, node: gast.expr) -> Any:
        """The truth of `node` as a test (`if`, `while`, a ternary, `not`): a Python bool or a
        run-time bool; `and`/`or` combine truth values (see expressions.condition)."""
        return self.compiler.rules.condition(self, node)

    def run_block(self, stmts: list[gast.stmt], live_out: frozenset[str]) -> None:
        """Build `stmts` in order (stops where the path ends)."""
        self.compiler.rules.run_block(self, stmts, live_out)

    def run_function(self) -> Any:
        """Build this frame's whole body; the value of its final `return`."""
        return self.compiler.rules.run_function(self)

    def assign(self, target: gast.expr, value: Any) -> None:
        """Bind `value` to an assignment target."""
        self.compiler.rules.assign(self, target, value)

    def call(self, func: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """Call a compile-time callable (an op, a cell, a helper, ...) on frame values."""
        return self.compiler.rules.call(self, func, args, kwargs)

    # -- errors -------------------------------------------------------------------------
    def error(self, message: str, hint: str = "", node: gast.AST | None = None,
              kind: type[CompileError] = CompileError) -> CompileError:
        """A CompileError at `node` (default: the expression or statement being built)."""
        err = error_at(self.parsed, node or self.at or self.stmt or self.fdef, message, hint)
        if kind is not CompileError:
            err = kind(err.message, err.file, err.line, err.col, err.source_line, err.hint)
        return err

    def writable(self, container: Any) -> None:
        """CompileError unless writing into the compile-time list or dict `container` is
        invisible outside the compiled call (it was not passed in or read from outside)."""
        found = self.compiler.foreign.get(id(container))
        if found is not None and found[0] is container:
            raise self.error(f"this changes a {type(container).__name__.replace('PyList', 'list')}"
                             f" that belongs to the caller ({found[1]}); compiled code cannot "
                             "change the caller's object",
                             "copy it first (`items = list(items)`, `d = dict(d)`) and return "
                             "the new one")

    def read_unusable(self, value: Unusable) -> CompileError:
        return self.error(value.message, value.hint)

    # -- position -----------------------------------------------------------------------
    def set_stmt(self, stmt: gast.stmt) -> None:
        """Make `stmt` the current statement: its location goes on every node built now."""
        self.stmt = stmt
        line = getattr(stmt, "lineno", None) or self.parsed.first_line
        text = self.parsed.lines[line - 1].strip() if 0 < line <= len(self.parsed.lines) else ""
        self.builder.loc = Loc(self.parsed.file, line, getattr(stmt, "col_offset", 0) or 0, text,
                               self.caller)

    def live_after(self) -> frozenset[str]:
        """Names read after the current statement (before being bound again)."""
        if self.live is None:
            return self.captured
        stmts, index, live_out = self.live
        return frozenset(names.live_in(stmts[index + 1:], set(live_out))) | self.captured

    # -- building -----------------------------------------------------------------------
    def op(self, op: OpDef | str, *inputs: Value, name: str = "", **attrs: Any) -> Value:
        """Add an op node; an `infer` failure becomes a CompileError at the user's line."""
        try:
            value = self.builder.op(op, *inputs, name=name, **attrs)
        except INFER_ERRORS as exc:
            opdef = op if isinstance(op, OpDef) else lookup(op)
            if self.compiler.watched and opdef.can_raise:
                # NOTE: inside a try block the error is the program's, raised when it runs
                builtin = next(c for c in type(exc).__mro__ if c.__module__ == "builtins")
                self.raise_at_runtime(builtin, str(exc))
            shown = ", ".join(str(v.type) for v in inputs) or "none"
            hint = f"check the operands' shapes and dtypes (inputs: {shown})"
            if any(isinstance(v.type, ListType | TupleType) for v in inputs):
                hint = (f"a list or tuple is not an array here (inputs: {shown}): make it one "
                        "with np.array(...), as NumPy does implicitly")
            if any(isinstance(v.type, AnyType) and (v.producer is None or v.producer.op is not
                                                     pyops.undefined) for v in inputs):
                raise self.error(
                    "an operand has another dtype, rank or kind on each path that made it (a "
                    "conditional expression or a function whose returns differ), and compiled "
                    "code has one type per value", "give every path the same dtype and rank "
                    f"(e.g. with .astype or np.int32(...)) (inputs: {shown})") from exc
            raise self.error(str(exc) or type(exc).__name__, hint,
                             kind=kind_for(exc)) from exc
        if self.compiler.numbers and any(v in self.compiler.numbers for v in inputs):
            self._number_result(value, inputs)
        node = value.producer
        if node is not None and node.effectful:
            self.compiler.note_effect(node)
            if node.op.writes is not None:
                after_write(self, node)
        return note_result(self, value) if isinstance(value.type, Tensor) else value

    def number_types(self, merged: Any, t: Type) -> frozenset[Type] | None:
        """The types other than `t` that a value of type `t` merged from `merged` (values or
        Python numbers) may have at run time, when it may be a number (see
        `Compiler.numbers`); None when it has type `t` whichever it came from."""
        if not isinstance(t, Tensor | Scalar):
            return None
        numbers, others, found = self.compiler.numbers, set(), False
        for v in merged:
            if isinstance(v, Value) and v in numbers:
                others |= numbers[v]
                found = True
                continue
            vt = v.type if isinstance(v, Value) else type_of(v) \
                if isinstance(v, bool | int | float) else None
            if isinstance(vt, Scalar) and vt != t:
                others.add(vt)
                found = True
        return frozenset(others - {t}) if found else None

    def _number_result(self, value: Value, inputs: tuple[Value, ...]) -> None:
        """Where an input may be a number of another type (see `Compiler.numbers`), the types
        the result may have instead: `s * 2` is a number where s is, while the type of `s + x`
        for an array x must not depend on which s is (else the op is refused)."""
        numbers, node = self.compiler.numbers, value.producer
        if node is None or node.is_region or not isinstance(value.type, Tensor | Scalar):
            return  # NOTE: a tuple or list holding a number is as its items are
        arrays = any(isinstance(v.type, Tensor) and v not in numbers for v in inputs)
        others: set[Type] = set()
        for k, v in enumerate(inputs):
            for other in numbers.get(v, ()):
                types = [u.type for u in inputs]
                types[k] = other
                try:
                    alternative = node.op.infer(*types, **node.attrs)
                except INFER_ERRORS:
                    continue  # NOTE: not an operand NumPy takes either; as typed
                if _covers(value.type, alternative):
                    continue
                if arrays:
                    raise self.error(
                        f"this is {alternative} where `{v.name or 'an operand'}` is "
                        f"{kind_name(other)} (as on some paths), but {value.type} where it is "
                        f"{kind_name(v.type)}: one value of two types",
                        "start it as an array of the dtype it gets (e.g. `np.float32(0)` "
                        "instead of `0`, `0.0` instead of `0`)")
                others.add(alternative)
        if others or not arrays and isinstance(value.type, Tensor):
            numbers[value] = frozenset(others) | numbers.get(value, frozenset())

    def number_facts(self, v: Value, what: str) -> None:
        """Refuse to fold `what` (a dtype, shape or class) of a value that may be a Python
        number at run time (see `Compiler.numbers`)."""
        if v in self.compiler.numbers:
            raise self.error(f"{what} of a value that is a Python number on some paths and of "
                             "another type on others is known only at run time",
                             "start it as an array of the dtype it gets (e.g. `np.float32(0)` "
                             "instead of `0`)")

    def constant(self, value: Any) -> Value:
        return self.op("constant", value=value)

    def undefined(self, name: str) -> Value:
        """The value of `name` on a path that never bound it (reading it raises at run time)."""
        # NOTE: built by hand: the op's attribute is called `name`, like Builder.op's hint.
        node = Node(pyops.undefined, (), {"name": name}, [AnyType()])
        return self.builder.insert(node).output

    def materialise(self, v: Any, name: str = "") -> Value:
        """`v` as a run-time value: constants become nodes, tuples `make_tuple`, lists
        `list_new`, dicts with constant keys `make_dict`; CompileError for objects that exist
        only at compile time."""
        if isinstance(v, Value):
            return v
        if v is PENDING:
            return self.constant(None)
        if isinstance(v, Unusable):
            raise self.read_unusable(v)
        if isinstance(v, Instance):
            raise self.error(f"a {v.cls.__name__} object made in compiled code cannot leave it "
                             "(be returned, printed, or kept in a run-time list)",
                             "return its attributes, or make the object outside the compiled "
                             "function and pass what it holds")
        if isinstance(v, tuple):
            if _plain(v):
                return self.constant(v)
            items = [self.materialise(x) for x in v]
            if tuple_class(v) is not tuple:
                return self.op("make_namedtuple", *items, name=name, cls=type(v))
            return self.op("make_tuple", *items, name=name)
        if isinstance(v, PyList):
            return self.op("list_new", *(self.materialise(x) for x in v.items), name=name)
        if isinstance(v, dict) and _plain(tuple(v)):
            return self.op("make_dict", *(self.materialise(x) for x in v.values()), name=name,
                           keys=tuple(v))
        if isinstance(v, bool | int | float | str | type(None)):
            return self.constant(v)
        if isinstance(v, np.ndarray | np.generic) and v.dtype != object:
            return self.constant(v)
        if isinstance(v, list):
            raise self.error(f"a {describe(v)} cannot be used as a run-time value here",
                             f"make it an array: np.array({v!r})"[:160])
        raise self.error(f"a {describe(v)} cannot be used as a run-time value here",
                         "only arrays, numbers, strings, None and tuples of them exist at run "
                         "time; decide on the other objects with compile-time values")

    def raise_at_runtime(self, exc_type: type, *args: Any) -> None:
        """Compile `raise exc_type(*args)` and end the current path."""
        values = [self.materialise(a) for a in args]
        self.op("raise", *values, exc_type=exc_type)
        raise DeadPath

    def new_block_value(self, block: Block, v: Any) -> Value:
        """`v` materialised at the end of `block` (a branch or loop body)."""
        with self.builder.at(InsertPoint.at_end(block)):
            return self.materialise(v)


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


def call_identity(func: types.FunctionType, receiver: Any = None) -> tuple[types.CodeType,
                                                                         int | None]:
    """What makes two inlined calls the same call: the code and the object it is bound to
    (a `Ref`'s object), so `construct` of two different cells is two calls, not recursion."""
    obj = getattr(receiver, "obj", receiver)
    return func.__code__, None if receiver is None else id(obj)


def nested_reads(fdef: gast.FunctionDef) -> frozenset[str]:
    """Names the functions nested in `fdef` (lambdas, defs) read: a call of one may read them
    at any later point, so they are kept live (merged after branches, carried in loops)."""
    found: set[str] = set()
    for stmt in fdef.body:
        for node in gast.walk(stmt):
            if isinstance(node, gast.FunctionDef | gast.Lambda):
                found |= names.read_names(node.body if isinstance(node, gast.FunctionDef)
                                          else node)
    return frozenset(found)


def _parameter_names(args: gast.arguments) -> set[str]:
    """The names a function's parameters bind (not the names their annotations read)."""
    found = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return {a.id for a in found if isinstance(a, gast.Name)}


def _covers(t: Type, other: Type) -> bool:
    """A value of type `other` fits type `t` (at most sizes differ where `t` has "?")."""
    if t == other:
        return True
    if not (isinstance(t, Tensor) and isinstance(other, Tensor)) or \
            (t.dtype, t.rank) != (other.dtype, other.rank):
        return False
    return join_types([t, other]) == t


def _plain(v: tuple) -> bool:
    """A tuple of Python scalars, strings and None (one constant node holds it)."""
    return all(isinstance(x, bool | int | float | str | type(None)) or
               (isinstance(x, tuple) and _plain(x)) for x in v)
