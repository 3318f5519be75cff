"""Lowers a graph's blocks to Python statements: one statement per node, native `if`/`while`/
`for` for regions (`emit_if`, `emit_while`, `emit_for`), region results assigned at the end of
each branch or loop body, and a marker before each run of statements from one user line.
"""
from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..graph import FOR, IF, TRY, WHILE, Block, Graph, Loc, Node, Tensor, Value
from ..ops import python as pyops
from . import pyast as py
from .inline import AND, OR
from ..ops.symbolic import Sym
from .literal import ConstantPool, dtype_literal, literal, size_expression
from .native.types import may_be_0d_array
from .prelude import unbound_local
from .buffers import PARAMETER as BUFFERS
from .lowering import in_loop
from .storage import Kind, Storage

@dataclass(frozen=True)
class EntrySize:
    """A symbolic size the function reads at entry: `name = <input>.shape[axis]`."""
    symbol: str
    name: str
    input: int
    axis: int


LocKey = tuple[str, int] | None
Chunk = tuple[Loc | None, list[ast.stmt]]
"""Statements and the user location they come from."""


def _key(loc: Loc | None) -> LocKey:
    """The user line a location is shown as (a layer's line shows as the user's call)."""
    if loc is None:
        return None
    user = loc.user
    return (user.file, user.line)


def return_loc(graph: Graph) -> Loc | None:
    """Where the user's return statement is: `graph.return_loc` if the frontend set it; else
    where the last returned value is computed (`return f(x)` computes it on the return line)."""
    if graph.return_loc is not None:
        return graph.return_loc
    last = graph.outputs[-1].producer if graph.outputs else None
    return last.loc if last is not None and last.parent is graph.body else None


class Emitter:
    """Builds the entry function of one module; `markers[i]` is the location marker i stands
    for (an `Expr` of `marker_text(i)`, replaced by a comment once printed)."""

    def __init__(self, storage: Storage, pool: ConstantPool,
                 frees: dict[Block, dict[int, list[str]]],
                 marker_text: Callable[[int], str],
                 sizes: Sequence[EntrySize] = ()) -> None:
        self.st, self.pool, self.frees, self.marker_text = storage, pool, frees, marker_text
        self.sizes = tuple(sizes)
        """The symbolic sizes the code reads, each bound once at entry (`n = x.shape[0]`)."""
        self.size_names = {s.symbol: py.name(s.name) for s in self.sizes}
        self.markers: list[Loc] = []
        self.context: LocKey = None
        """The user line the last emitted block ended in."""
        self.helpers: set[Callable[..., Any]] = set()
        """Prelude functions the function calls (copied into the module like op helpers)."""
        self._marker_stmts: dict[int, ast.stmt] = {}
        """id -> marker statement (kept here, so no other node can reuse its id)."""
        self.kernels: dict[Node, Any] = {}
        """Loop regions a Numba kernel computes (`native.Kernel`): each is one call."""
        self._scalars: dict[tuple[str, Any], np.ndarray] = {}
        """The 0-d arrays standing for typed numbers (see `operand`), one per dtype and value."""
        self.buffers: dict[Node, str] = {}
        """Nodes computing into a buffer kept across calls -> its attribute (see buffers.py)."""

    def function(self, graph: Graph, fn_name: str) -> ast.FunctionDef:
        """`def fn_name(<inputs>): <body>; return <results>`; the return statement is
        attributed to `graph.return_loc` if set."""
        params = [self.st.name(v) for v in graph.inputs]
        body = self.block(graph.body, None)
        entry = [py.assign(s.name, py.subscript(py.attr(self.st.name(graph.inputs[s.input]),
                                                        "shape"), py.const(s.axis)))
                 for s in self.sizes]
        if graph.outputs:
            values = [self.result(v) for v in graph.outputs]
            ret = py.return_(values[0] if len(values) == 1 else py.tuple_(values))
            inlined = any(self.st.kind[v] is Kind.EXPR for v in graph.outputs)
            loc = return_loc(graph) if inlined or graph.return_loc is not None else None
            if loc is not None and _key(loc) != self.context:
                body.append(self.marker(loc))
            body.append(ret)
        return py.function(fn_name, params, entry + body)

    def marker(self, loc: Loc) -> ast.stmt:
        """A statement standing for the comment `# file:line: source` (see `markers`)."""
        self.markers.append(loc)
        stmt = py.expr_stmt(py.const(self.marker_text(len(self.markers) - 1)))
        self._marker_stmts[id(stmt)] = stmt
        return stmt

    # -- expressions ----------------------------------------------------------------------
    def expr(self, value: Value) -> ast.expr:
        """How generated code reads `value` where it is used."""
        kind = self.st.kind[value]
        if kind is Kind.VAR:
            return py.name(self.st.name(value))
        if kind is Kind.UNDEFINED:  # NOTE: a name never assigned would be a global, not local
            self.helpers.add(unbound_local)
            return py.call(unbound_local.__name__, [py.const(self.st.unbound_name(value))])
        if kind is Kind.INLINE:
            constant = self.st.constant(value)
            if isinstance(constant, Sym):  # NOTE: a `dim` node: the variable read at entry
                return size_expression(constant, self.size_names)
            return literal(constant, hoist=self.pool.ref)  # NOTE: names a namedtuple's class
        if kind is Kind.MODULE:
            return self.pool.ref(self.st.constant(value), value.name)
        if kind is Kind.NONE:
            return py.const(None)
        return self.render(value.producer)

    def result(self, value: Value) -> ast.expr:
        """A returned value; a module constant array is copied (the caller may write to it)."""
        ref = self.expr(value)
        if self.st.kind[value] is Kind.MODULE and isinstance(self.st.constant(value), np.ndarray):
            return py.call(py.attr(ref, "copy"))
        return ref

    def render(self, node: Node) -> ast.expr:
        """The node's expression: its op's (in-place form writing into the buffer input's
        variable), or for an If written as an expression, `c and e` / `a if c else b`."""
        if node in self.st.ifs:
            return self.if_expression(node)
        low = self.st.lowered[node]
        hint = node.outputs[0].name or node.name
        out = None if low.inplace is None else py.name(self.st.name(node.inputs[low.inplace]))
        if low.into_row is not None:  # NOTE: `out=stack[row]`: a view of the row
            out = py.subscript(self.expr(low.into_row.inputs[0]), self.expr(low.into_row.inputs[1]))
        if low.into_buffer:  # NOTE: `out=buffers.x`, kept for the next call
            out = py.attr(BUFFERS, self.buffers[node])
        return low.form.fill([self.operand(node, v) for v in node.inputs],
                             lambda value: self.pool.ref(value, hint), out, self.size_names)

    def operand(self, node: Node, value: Value) -> ast.expr:
        """How `node` reads its input `value`: a Python number meeting a float array in
        arithmetic inside a loop is a module-level 0-d array of the array's dtype (see
        `typed_scalar`), else `expr(value)`."""
        typed = typed_scalar(node, value, self.st) if in_loop(node) else None
        if typed is None:
            return self.expr(value)
        key = (typed.dtype.str, typed.item())
        if key not in self._scalars:
            self._scalars[key] = typed
        hint = f"f{typed.dtype.itemsize * 8}_{self.st.constant(value)}".replace("-", "minus_")
        return self.pool.ref(self._scalars[key], hint)

    def if_expression(self, node: Node) -> ast.expr:
        form = self.st.ifs[node]
        test = self.expr(node.inputs[0])
        if form == AND:
            return py.bool_op(ast.And, [test, self.expr(node.then.results[0])])
        if form == OR:
            return py.bool_op(ast.Or, [test, self.expr(node.else_.results[0])])
        return py.if_exp(test, *(self.expr(b.results[0]) for b in node.blocks))

    # -- statements -----------------------------------------------------------------------
    def block(self, block: Block, context: LocKey) -> list[ast.stmt]:
        """The statements of `block`, a location marker opening each run from one user line
        (`context`: the line of the statement enclosing the block)."""
        stmts: list[ast.stmt] = []
        frees = self.frees.get(block, {})
        for i, node in enumerate(block.nodes):
            for loc, produced in self.statements(node, _key(node.loc) or context):
                if produced and loc is not None and _key(loc) != context:
                    stmts.append(self.marker(loc))
                    context = _key(loc)
                stmts.extend(produced)
            if i in frees:
                stmts.append(py.delete(frees[i]))
        self.context = context  # NOTE: the caller of the outermost block reads it last
        return stmts

    def statements(self, node: Node, key: LocKey) -> list[Chunk]:
        """The node's statements, in runs attributed to user locations."""
        if node in self.kernels:
            return [(node.loc, self.kernel_call(self.kernels[node]))]
        if node.op == IF and node not in self.st.ifs:
            return [(node.loc, self.emit_if(node, key))]
        if node.op == WHILE:
            return self.emit_while(node, key)
        if node.op == FOR:
            return self.emit_for(node, key)
        if node.op == TRY:
            return [(node.loc, self.emit_try(node, key))]
        return [(node.loc, self.op_statements(node))]

    def op_statements(self, node: Node) -> list[ast.stmt]:
        out = node.output
        kind = self.st.kind[out]
        if kind is Kind.VAR and node.op is pyops.constant:  # a list: fresh on every call
            return [py.assign(self.st.name(out), literal(self.st.constant(out),
                                                         hoist=self.pool.ref))]
        low = self.st.lowered.get(node)
        if kind is Kind.VAR and low is not None and low.inplace is not None:
            if low.augmented is not None:
                return [py.aug_assign(self.st.name(out), low.augmented, self.render(node))]
            written = self.render(node)
            if isinstance(written, ast.Name):
                return []  # NOTE: the op was done already (a row its producer computed into)
            return [py.expr_stmt(written)]
        if kind is Kind.VAR:
            name, value = self.st.name(out), self.render(node)
            if isinstance(value, ast.Name) and value.id == name:
                return []  # NOTE: `x = x` (a `depend` sharing its input's variable)
            return [py.assign(name, value)]
        if kind is Kind.NONE:
            return [py.expr_stmt(self.render(node))]
        return []  # constants, undefined values and inlined expressions have no statement

    def assign(self, targets: Sequence[Value], sources: Sequence[Value]) -> list[ast.stmt]:
        """Region-boundary assignments, parallel: a tuple assignment when an ordered sequence
        would overwrite a variable a later source still reads (`a, b = b, a`)."""
        copies, _ = self.st.copy_plan(targets, sources)
        names = [self.st.name(t) for t, _ in copies]
        values = [self.expr(s) for _, s in copies]
        reads = [{self.st.name(v) for v in self.st.reads(s)} for _, s in copies]
        if any(names[i] in reads[j] for i in range(len(names)) for j in range(i + 1, len(names))):
            return [py.assign_tuple(names, values)]
        return [_copy_binding(n, v) if self.st.splits_unbound(t, s) else py.assign(n, v)
                for n, v, (t, s) in zip(names, values, copies)]

    def kernel_call(self, kernel: Any) -> list[ast.stmt]:
        """`a, b = Net_construct_while(x, w)`: the region as one call of its Numba kernel. A
        number that may be a 0-d array goes in as its scalar (`x[()]`); a rank-0 result comes
        back as a Python number and is made the NumPy scalar NumPy code would hold."""
        args = []
        for value in kernel.params:
            arg = self.expr(value)
            if may_be_0d_array(value):
                arg = ast.Subscript(value=arg, slice=py.tuple_([]), ctx=ast.Load())
            args.append(arg)
        call = py.call(kernel.name, args)
        names = [self.st.name(v) for v in kernel.results]
        if not names:
            return [py.expr_stmt(call)]
        target = py.store(names[0]) if len(names) == 1 else ast.Tuple(
            elts=[py.store(n) for n in names], ctx=ast.Store())
        stmts: list[ast.stmt] = [ast.Assign(targets=[target], value=call)]
        for value, name in zip(kernel.results, names):
            if isinstance(value.type, Tensor) and value.type.rank == 0:
                stmts.append(py.assign(name, py.call(dtype_literal(value.type.dtype),
                                                     [py.name(name)])))
        return stmts

    def emit_if(self, node: Node, key: LocKey) -> list[ast.stmt]:
        """`if c: ... else: ...`; each branch ends assigning the If's results. An else branch
        that is one `if` is an `elif` (its own comment dropped: the line is the user's
        `elif`), so a chain of any length stays one indentation level deep."""
        then, else_ = (self.block(b, key) + self.assign(node.outputs, b.results)
                       for b in node.blocks)
        test = self.expr(node.inputs[0])
        if not then and not else_:
            return []
        if not then:
            return [py.if_(py.not_(test), else_, [])]
        rest = [s for s in else_ if id(s) not in self._marker_stmts]
        if len(rest) == 1 and isinstance(rest[0], ast.If):  # NOTE: printed as `elif`
            else_ = rest
        return [py.if_(test, then, else_)]

    def emit_try(self, node: Node, key: LocKey) -> list[ast.stmt]:
        """`try: ... except (<catch>) as e: ... finally: ...`; the try and except blocks end
        assigning the merged results, the finally block its own."""
        merged = len(node.try_body.results)
        body = self.block(node.try_body, key) + self.assign(node.outputs[:merged],
                                                             node.try_body.results)
        handlers = []
        if node.handler is not None:
            catch = node.attrs["catch"]
            types = literal(catch[0] if len(catch) == 1 else catch, hoist=self.pool.ref)
            handler = self.block(node.handler, key) + self.assign(node.outputs[:merged],
                                                                  node.handler.results)
            exc = node.handler.params[0]
            name = self.st.name(exc) if exc.uses else None
            handlers.append(ast.ExceptHandler(type=types, name=name, body=handler or [ast.Pass()]))
        final = []
        if node.finally_ is not None:
            final = self.block(node.finally_, key) + self.assign(node.outputs[merged:],
                                                                 node.finally_.results)
        if not handlers and not final:
            return body
        return [ast.Try(body=body or [ast.Pass()], handlers=handlers, orelse=[],
                        finalbody=final or ([] if handlers else [ast.Pass()]))]

    def emit_while(self, node: Node, key: LocKey) -> list[Chunk]:
        """`while <cond>:` when the condition is one expression, else `while True:` computing
        it and breaking when false. The carried variables are assigned before the loop and at
        the end of the body; after the loop they are its results."""
        cond = self.block(node.cond, key)
        test = self.expr(node.cond.results[0])
        body = self.block(node.body, key) + self.assign(node.outputs, node.body.results)
        if cond:
            body = cond + [py.if_(py.not_(test), [py.break_()], [])] + body
            test = py.const(True)
        return self.inits(node, node.inits) + [(node.loc, [py.while_(test, body)])]

    def emit_for(self, node: Node, key: LocKey) -> list[Chunk]:
        """`for i in range(start, stop, step):`, dropping a start of 0 and a step of 1."""
        start, stop, step = node.bounds
        if self._is_int(step, 1):
            bounds = [stop] if self._is_int(start, 0) else [start, stop]
        else:
            bounds = [start, stop, step]
        index = self.st.name(node.induction)
        body = self.block(node.body, key) + self.assign(node.outputs, node.body.results)
        loop = py.for_range(index, [self.expr(b) for b in bounds], body)
        return self.inits(node, node.inits) + [(node.loc, [loop])]

    def inits(self, node: Node, inits: Sequence[Value]) -> list[Chunk]:
        """The carried variables' first values; a constant's assignment is attributed to the
        line that wrote the constant (`s = 0.0`), the others to the loop."""
        stmts = self.assign(node.outputs, inits)
        if len(stmts) == 1 and isinstance(stmts[0].targets[0], ast.Tuple):
            return [(node.loc, stmts)]
        copies, _ = self.st.copy_plan(node.outputs, inits)
        return [((self.st.kind[source] is Kind.INLINE and source.producer.loc) or node.loc, [s])
                for (_, source), s in zip(copies, stmts)]

    def _is_int(self, value: Value, number: int) -> bool:
        if self.st.kind[value] is not Kind.INLINE:
            return False
        const = self.st.constant(value)
        return type(const) is int and const == number


def _copy_binding(name: str, value: ast.Name) -> ast.stmt:
    """`name = value` where `value` may be unbound: then `name` ends unbound too, as the one
    Python variable the two stand for would be (`del` of a fresh binding unbinds it)."""
    unbind = [py.assign(name, py.const(None)), py.delete([name])]
    return ast.Try(body=[py.assign(name, value)],
                   handlers=[ast.ExceptHandler(type=py.name("UnboundLocalError"), name=None,
                                               body=unbind)],
                   orelse=[], finalbody=[])


_ARITHMETIC = frozenset(("Add", "Sub", "Mult", "Div"))
"""Operators whose result a weak Python number and a 0-d array of the other operand's dtype
compute alike (not `**`: NumPy takes fast paths, `x ** 2` as `np.square`, for numbers only)."""


def typed_scalar(node: Node, value: Value, st: Storage) -> np.ndarray | None:
    """`value` as a 0-d array, where that changes nothing but speed: an inline int or float
    meeting an array of float dtype D in `+ - * /` with a result of dtype D, so NumPy (either
    version) casts the number to D anyway; the number must convert to D exactly (an int) or
    stay finite (a float). A NumPy ufunc takes a 0-d array about twice as fast as a Python
    number on small arrays, which is what a loop body pays per iteration."""
    if st.kind[value] is not Kind.INLINE or node.op.operator not in _ARITHMETIC \
            or not node.op.elementwise or len(node.inputs) != 2:
        return None
    number = st.constant(value)
    other = node.inputs[1 - node.inputs.index(value)]
    out = node.output.type
    if type(number) not in (int, float) or other is value or \
            not (isinstance(out, Tensor) and out.rank >= 1 and out.dtype.kind == "f") or \
            not (isinstance(other.type, Tensor) and other.type.dtype == out.dtype):
        return None
    with np.errstate(all="ignore"):
        typed = np.array(number, out.dtype)
    if type(number) is int and int(typed) != number or not np.isfinite(typed) \
            or not math.isfinite(number):
        return None
    return typed
