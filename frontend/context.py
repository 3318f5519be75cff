"""The state of one function being built: `Frame` (its source, symbol table and position), its
scopes and the exceptions that roll a statement back. The state shared by a whole build is
`compiler.Compiler`."""
from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping

import gast
import numpy as np

from ..graph import (AnyType, Block, Builder, InsertPoint, ListType, Loc, Node, Scalar, Tensor,
                     TupleType, Type, Value, join_types)
from ..graph.types import tuple_class, tuple_of_class, type_of
from ..ops import OpDef, lookup
from ..ops import python as pyops
from . import names
from .aliases import after_write, note_result
from .errors import CompileError, kind_for
from .source import ParsedFunction, error_at
from .values import MISSING, PENDING, Instance, PyList, Unusable, describe, kind_name

if TYPE_CHECKING:
    from .compiler import Compiler

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
    declared_globals: frozenset[str] = frozenset()
    """Names its `global` statements declare: module globals it reads and writes."""
    stored_attributes: frozenset[str] = frozenset()
    """Attribute names it assigns (`self.count += 1`)."""
    """Names that functions nested in this one read (see `nested_reads`)."""


class Mark:
    """The state before a statement, to build it again another way."""

    def __init__(self, f: Frame) -> None:
        self.block = f.builder.ip.block
        self.count = len(self.block.nodes)
        self.scope = f.scope.copy()
        self.effect = f.compiler.last_effect.get(self.block)
        self.writes = f.compiler.save_writes()

    def restore(self, f: Frame) -> None:
        added = self.block.nodes[self.count:]
        for node in added:
            node.drop_all_uses()
        for node in added:
            self.block.remove(node)
        f.scope = self.scope
        f.compiler.last_effect.pop(self.block, None)
        f.compiler.restore_writes(self.writes)
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
    writes_through: Callable[[Frame, Any], bool] = lambda f, container: False
    """Whether a write into the caller's `container` is made to it too (effects.py)."""
    replaced: Callable[[Frame, Any, Any], None] = lambda f, old, new: None
    """After a write made `new` of `old`: the caller's object follows (effects.py)."""
    caller_view: Callable[[Frame, Any], Any] = lambda f, container: None
    """The caller's very list or dict that compile-time `container` stands for, as a run-time
    value, or None when it is not the caller's (effects.py)."""


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
        self.global_names = prepared.declared_globals
        self.stored_attributes = prepared.stored_attributes
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
        if found is not None and found[0] is container and \
                not self.compiler.rules.writes_through(self, container):
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

    def materialise(self, v: Any, name: str = "", made: dict[int, Value] | None = None
                    ) -> Value:
        """`v` as a run-time value: constants become nodes, tuples `make_tuple`, lists
        `list_new`, dicts with constant keys `make_dict`; CompileError for objects that exist
        only at compile time. A list or dict found twice in `v` (`return a, a`) is made once:
        both places hold one object, as in Python (`made`: id -> value, over one `v`)."""
        if isinstance(v, Value):
            return v
        made = {} if made is None else made
        if id(v) in made:
            return made[id(v)]
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
            items = [self.materialise(x, made=made) for x in v]
            if tuple_class(v) is not tuple:
                return self.op("make_namedtuple", *items, name=name, cls=type(v))
            return self.op("make_tuple", *items, name=name)
        if isinstance(v, PyList | dict):
            view = self.compiler.rules.caller_view(self, v)
            if view is not None:
                return view  # NOTE: the caller's object itself, not a copy of its items
        if isinstance(v, PyList):
            items = [self.materialise(x, made=made) for x in v.items]
            made[id(v)] = self.op("list_new", *items, name=name)
            return made[id(v)]
        if isinstance(v, dict) and _plain(tuple(v)):
            items = [self.materialise(x, made=made) for x in v.values()]
            made[id(v)] = self.op("make_dict", *items, name=name, keys=tuple(v))
            return made[id(v)]
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
