"""Builds one Numba kernel: a loop region (with every If and loop nested in it) as a function the
NumPy module calls, decorated `@numba.njit` with its signature.

Inside, every array value is a variable and every rank-0 or Python number a scalar. Elementwise
ops run as explicit loops over the elements; a chain of them on one shape is one loop computing
each element through the chain (no temporaries), and a number used once is written into the
expression that reads it. Other ops use their `numba` spelling (`OpDef.numba`). A loop's carried
values share one variable (assigned before the loop and at the end of each iteration), as do an
If's results. Anything a kernel cannot compute raises `NotNative` while building.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ...graph import FOR, IF, WHILE, Block, Loc, Node, Value
from ...graph.ir import INPLACE_ATTR
from ...ops import python as pyops
from .. import pyast as py
from ..literal import literal
from ..namer import Namer
from ..template import prepare
from . import elements as el
from .types import NotNative, fits_kernel_constant, is_array, kernel_type

Marker = Callable[[Loc], ast.stmt]

DECORATOR = 'numba.njit({signature!r}, cache=True, error_model="numpy")'
"""Kernels are compiled when the module loads (an explicit signature; arrays of any layout),
cached on disk beside the module, and divide by zero as NumPy does (inf, nan, 0: no exception)."""

HELPER_DECORATOR = 'numba.njit(cache=True, error_model="numpy")'

VIEWS = frozenset({"getitem", "transpose"})
"""Ops whose array result may be a view of their first input."""


@dataclass
class Kernel:
    """One loop region as a Numba function."""
    region: Node
    name: str
    params: list[Value]
    """The values the call passes, in order (bounds of a For, initial carried values, values the
    region reads from outside)."""
    results: list[Value]
    """The region's outputs the kernel returns (those read after it), in order."""
    function: ast.FunctionDef
    signature: str
    helpers: set[Callable[..., Any]] = field(default_factory=set)


@dataclass(frozen=True)
class _Fused:
    """An elementwise array value computed inside the loop of the one op reading it."""
    node: Node


def build_kernel(region: Node, name: str, namer: Namer, marker: Marker,
                 outer_name: Callable[[Value], str]) -> Kernel:
    """The kernel computing loop `region`; NotNative if a kernel cannot."""
    return _Builder(region, name, namer, marker, outer_name).build()


class _Builder:
    def __init__(self, region: Node, name: str, namer: Namer, marker: Marker,
                 outer_name: Callable[[Value], str]) -> None:
        self.region, self.name, self.namer, self.marker = region, name, namer, marker
        self.outer_name = outer_name
        self.names: dict[Value, str] = {}
        self.exprs: dict[Value, ast.expr] = {}
        """Numbers written where they are read: constants, and values used once."""
        self.fused: dict[Value, _Fused] = {}
        self.helpers: set[Callable[..., Any]] = set()
        self.params: list[Value] = []
        self.param_names: list[str] = []
        self.context: tuple[str, int] | None = None
        self.indices: list[str] = []
        self.inlined: set[Value] = set()
        """Numbers read once, written into the expression reading them."""
        self.contiguous: list[ast.stmt] = []
        """The statements binding outer arrays to contiguous variables (`contiguous_copy`)."""
        inner = [n for b in region.blocks for n in b.walk()]
        self.inner_nodes = set(inner)
        self.inner_blocks = {b for n in [region, *inner] for b in n.blocks}
        self.writes_in_place = any(not n.is_region and n.op.writes is not None for n in inner)
        self.inside = {v for n in inner for v in n.outputs} | {
            p for n in [region, *inner] for b in n.blocks for p in b.params}

    # -- the function ------------------------------------------------------------------------
    def build(self) -> Kernel:
        region = self.region
        slots = self.slot_names(region)
        if region.op == FOR:
            for bound in region.bounds:
                self.bind_outer(bound, self.outer_name(bound))
        for init, slot in zip(region.inits, slots):
            self.param(init, slot)
            if is_array(init.type) and _unshared_fresh(init):
                # NOTE: a copy of an array nothing else holds is not observable
                self.contiguous.append(py.assign(slot, py.call(
                    py.attr("np", "ascontiguousarray"), [py.name(slot)])))
        for value in self.captures():
            self.bind_outer(value, self.outer_name(value))
        body = self.loop(region, slots, inits_bound=True)
        body[:0] = self.contiguous
        results = [out for out in region.outputs if out.uses]
        if results:
            values = [py.name(self.names[v]) for v in results]
            body.append(py.return_(values[0] if len(values) == 1 else py.tuple_(values)))
        types = [kernel_type(v.type, f"%{v.name or 'input'}") for v in self.params]
        signature = "(" + ", ".join(types) + ("," if len(types) == 1 else "") + ")"
        function = py.function(self.name, self.param_names, body)
        function.decorator_list = [ast.parse(DECORATOR.format(signature=signature),
                                             mode="eval").body]
        return Kernel(region, self.name, self.params, results, function, signature, self.helpers)

    def param(self, value: Value, name: str) -> None:
        kernel_type(value.type, f"%{value.name or 'input'} (read by the loop)")
        self.params.append(value)
        self.param_names.append(name)

    def bind_outer(self, value: Value, hint: str) -> None:
        """A value from outside the region: a literal if it is a number constant, else a
        parameter."""
        if value in self.names or value in self.exprs:
            return
        node = value.producer
        if node is not None and node.op is pyops.constant \
                and fits_kernel_constant(node.attrs["value"]):
            self.exprs[value] = literal(node.attrs["value"])
            return
        name = self.namer.fresh(hint)
        self.names[value] = name
        self.param(value, name)
        if is_array(value.type) and not self.writes_in_place and self.consumed(value):
            self.contiguous.append(self.contiguous_copy(value, name))

    def contiguous_copy(self, value: Value, param: str) -> ast.stmt:
        """Read outer array `value` (parameter `param`) through a variable Numba types as
        contiguous: `np.ascontiguousarray(x)` (Numba checks at run time and copies only an array
        that is not), `np.ascontiguousarray(x.T).T` for a transpose made outside (a view of a
        C-contiguous array: Fortran order).

        A parameter's type is "any layout" (the signature's `[:, :]`), and on such an array
        LLVM does not vectorize an element loop (its strides are unknown: tanh 6.6 ns an
        element instead of 2.4) and `np.dot` copies the operand on every call (a 64x64 weight:
        2.4 us a product). The copy is at most once a call and only of a value the kernel
        consumes (`consumed`) in a region that writes no array in place, so no write is missed
        and no view of the copy leaves the kernel."""
        name = self.names[value] = self.namer.fresh(f"{param}_c")
        source = py.name(param)
        producer = value.producer
        if producer is not None and not producer.is_region and producer.op.name == "transpose" \
                and value.type.rank == 2:
            copy = py.call(py.attr("np", "ascontiguousarray"), [py.attr(source, "T")])
            return py.assign(name, py.attr(copy, "T"))
        return py.assign(name, py.call(py.attr("np", "ascontiguousarray"), [source]))

    def consumed(self, value: Value) -> bool:
        """True if every use of `value` in the region makes a fresh value from it (an
        elementwise op, a product, a reduction) or a view (an index, a transpose) itself only
        consumed so: nothing in the region keeps the array, yields it or carries it (uses
        outside read the original)."""
        for use in value.uses:
            user = use.user
            if user not in self.inner_nodes and user not in self.inner_blocks:
                continue
            if not isinstance(user, Node) or user.is_region or user.op.writes is not None \
                    or user.op.same_object:
                return False
            if user.op.name in VIEWS:
                if not all(self.consumed(out) for out in user.outputs):
                    return False
            elif not (user.op.fresh or user.op.elementwise):
                return False
        return True

    def captures(self) -> list[Value]:
        """Values defined outside the region that something inside reads, in order of use."""
        found: dict[Value, None] = {}

        def visit(block: Block) -> None:
            for node in block.nodes:
                for value in node.inputs:
                    if value not in self.inside:
                        found.setdefault(value)
                for inner in node.blocks:
                    visit(inner)
            for value in block.results:
                if value not in self.inside:
                    found.setdefault(value)

        for block in self.region.blocks:
            visit(block)
        return list(found)

    # -- statements --------------------------------------------------------------------------
    def block(self, block: Block) -> list[ast.stmt]:
        stmts: list[ast.stmt] = []
        self.plan_fusion(block)
        for node in block.nodes:
            produced = self.statements(node)
            key = (node.loc.file, node.loc.line) if node.loc is not None else None
            if produced and key is not None and key != self.context:
                stmts.append(self.marker(node.loc))
                self.context = key
            stmts.extend(produced)
        return stmts

    def statements(self, node: Node) -> list[ast.stmt]:
        if node.op == IF:
            return self.if_(node)
        if node.op in (WHILE, FOR):
            return self.loop(node, self.slot_names(node), inits_bound=False)
        for value in node.outputs:
            kernel_type(value.type, f"%{value.name or node.name}")
        if node.op is pyops.constant:
            value = node.attrs["value"]
            if fits_kernel_constant(value):
                self.exprs[node.output] = literal(value)
                return []
            if isinstance(value, np.ndarray):  # NOTE: passed in, as the module holds it
                self.names[node.output] = self.namer.fresh(node.output.name or "const")
                self.param(node.output, self.names[node.output])
                return []
            raise NotNative(f"a constant of type {type(value).__name__}")
        if node.op.elementwise:
            return self.elementwise(node)
        return self.whole(node)

    def elementwise(self, node: Node) -> list[ast.stmt]:
        out = node.output
        if out in self.fused:
            el.element_form(node)  # NOTE: checked now; built where it is read
            return []
        if not is_array(out.type):
            expr = self.element(out_node=node, index=[], shape=())
            return self.scalar_result(node, expr)
        shape = out.type.shape
        index = self.index_names(len(shape))
        expr = self.element(out_node=node, index=[py.name(i) for i in index], shape=shape)
        buffer = self.inplace_buffer(node)
        stmts: list[ast.stmt] = []
        if buffer is None:
            buffer = self.names[out] = self.namer.fresh(out.name or "t")
            stmts.append(py.assign(buffer, py.call(py.attr("np", "empty"),
                                                   [literal(tuple(shape)),
                                                    literal(out.type.dtype)])))
        else:
            self.names[out] = buffer
        store = ast.Assign(targets=[el.store_subscript(buffer, [py.name(i) for i in index])],
                           value=expr)
        stmts.append(el.loop_nest(shape, index, store))
        return stmts

    def inplace_buffer(self, node: Node) -> str | None:
        """The variable of the input the node may overwrite (memory planning marked it and it
        is an array this kernel allocated), else None."""
        k = node.attrs.get(INPLACE_ATTR)
        if k is None:
            return None
        buffer = node.inputs[k]
        producer = buffer.producer
        if buffer not in self.names or buffer not in self.inside or producer is None \
                or producer.is_region or buffer.type != node.output.type:
            return None
        return self.names[buffer]

    def element(self, out_node: Node, index: list[ast.expr], shape: Sequence[int]) -> ast.expr:
        """The expression of `out_node`'s result at `index` of a loop over `shape`."""
        form, helpers = el.element_form(out_node)
        self.helpers.update(helpers)
        args = [self.read_element(v, index, shape) for v in out_node.inputs]
        return el.fill(form, args)

    def read_element(self, value: Value, index: list[ast.expr], shape: Sequence[int]
                     ) -> ast.expr:
        if value in self.fused:
            return self.element(self.fused[value].node, index, shape)
        if not is_array(value.type):
            return self.read(value)
        return el.subscript(self.var(value), el.broadcast_index(value.type.shape, shape, index))

    def whole(self, node: Node) -> list[ast.stmt]:
        """An op over whole values, by its `numba` spelling."""
        types = tuple(v.type for v in node.inputs)
        attrs = node.op_attrs
        spelling = node.op.numba_spelling(types, attrs)
        if spelling is None:
            shown = ", ".join(map(str, types))
            raise NotNative(f"{node.name} has no Numba form" + (f" for {shown}" if shown else ""))
        self.helpers.update(spelling.helpers)
        form = prepare(node.op, spelling, len(node.inputs))
        if isinstance(form.tree, ast.Name) and form.order == (0,):  # the input itself
            self.alias(node.output, node.inputs[0])
            return []
        before: list[ast.stmt] = []
        args = []
        for i, value in enumerate(node.inputs):
            expr = self.read(value)
            if i not in form.once and value in self.exprs and not _simple(expr):
                name = self.names[value] = self.namer.fresh(value.name or "t")
                before.append(py.assign(name, expr))
                del self.exprs[value]
                expr = py.name(name)
            args.append(expr)
        expr = el.fill(form, args)
        out = node.output
        if node.op.same_object:
            self.alias(out, node.inputs[0])
            return before + [py.assign(self.names[out], expr)]
        if not is_array(out.type):
            return before + self.scalar_result(node, expr)
        self.names[out] = self.namer.fresh(out.name or "t")
        return before + [py.assign(self.names[out], expr)]

    def scalar_result(self, node: Node, expr: ast.expr) -> list[ast.stmt]:
        out = node.output
        if out in self.inlined:
            self.exprs[out] = expr
            return []
        self.names[out] = self.namer.fresh(out.name or "t")
        return [py.assign(self.names[out], expr)]

    def alias(self, value: Value, source: Value) -> None:
        if source in self.names:
            self.names[value] = self.names[source]
        else:
            self.exprs[value] = self.read(source)

    def read(self, value: Value) -> ast.expr:
        """How the kernel reads a whole value (an array variable, or a number's expression)."""
        if value in self.fused:
            raise NotNative("an elementwise value read as a whole")  # NOTE: planning prevents it
        if value in self.exprs:
            return py.copy_expr(self.exprs[value])
        return py.name(self.var(value))

    def var(self, value: Value) -> str:
        if value not in self.names:
            raise NotNative(f"%{value.name} is read before the kernel computes it")
        return self.names[value]

    def index_names(self, rank: int) -> list[str]:
        while len(self.indices) < rank:
            self.indices.append(self.namer.fresh(f"i{len(self.indices)}" if rank > 1 or
                                                 self.indices else "i"))
        return self.indices[:rank]

    # -- regions -----------------------------------------------------------------------------
    def slot_names(self, node: Node) -> list[str]:
        """One variable per carried value (or If result), named after it; every block
        parameter and the output of the slot read it. Every value flowing into a slot must
        have the slot's type (NumPy code may change a variable's type, a kernel may not)."""
        names = []
        for k, out in enumerate(node.outputs):
            kernel_type(out.type, f"%{out.name or node.name}")
            for value in node.incoming(k):
                if value.type != out.type:
                    raise NotNative(f"%{out.name or node.name} is {value.type} before and "
                                    f"{out.type} after")
            name = self.namer.fresh(out.name or "t")
            names.append(name)
            self.names[out] = name
            if node.op in (WHILE, FOR):
                for block in node.blocks:
                    param = node.carried(block)[k]
                    self.names[param] = name
        return names

    def assign(self, targets: Sequence[str], sources: Sequence[Value]) -> list[ast.stmt]:
        """`targets = sources` in parallel (a tuple assignment where one source reads a target
        assigned before it)."""
        pairs = [(t, s) for t, s in zip(targets, sources, strict=True)
                 if not (s in self.names and self.names[s] == t)]
        values = [self.read(s) for _, s in pairs]
        names = [t for t, _ in pairs]
        reads = [{n.id for n in ast.walk(v) if isinstance(n, ast.Name)} for v in values]
        if any(names[i] in reads[j] for i in range(len(names)) for j in range(i + 1, len(names))):
            return [py.assign_tuple(names, values)]
        return [py.assign(n, v) for n, v in zip(names, values)]

    def if_(self, node: Node) -> list[ast.stmt]:
        test = self.test(node.inputs[0])
        if len(node.outputs) == 1 and not is_array(node.output.type) and node.output.uses:
            expr = self.if_expression(node, test)
            if expr is not None:
                self.exprs[node.output] = expr
                return []
        names = self.slot_names(node)
        arms = [self.block(b) + self.assign(names, b.results) for b in node.blocks]
        return [py.if_(test, arms[0], arms[1])]

    def if_expression(self, node: Node, test: ast.expr) -> ast.expr | None:
        """`c and e`, `c or e` or `a if c else b` when both arms compute only numbers written
        inline; else None (nothing was emitted)."""
        saved = (dict(self.names), dict(self.exprs), self.context)
        arms = [self.block(b) for b in node.blocks]
        if any(arms):
            self.names, self.exprs, self.context = saved[0], saved[1], saved[2]
            return None
        then, else_ = (b.results[0] for b in node.blocks)
        cond = node.inputs[0]
        if else_ is cond:
            return py.bool_op(ast.And, [test, self.read(then)])
        if then is cond:
            return py.bool_op(ast.Or, [test, self.read(else_)])
        return py.if_exp(test, self.read(then), self.read(else_))

    def test(self, value: Value) -> ast.expr:
        if is_array(value.type):
            raise NotNative(f"the condition %{value.name} is an array ({value.type})")
        kernel_type(value.type, f"the condition %{value.name}")
        return self.read(value)

    def loop(self, node: Node, slots: list[str], inits_bound: bool) -> list[ast.stmt]:
        """The loop statement (after the initial assignments unless `inits_bound`)."""
        stmts = [] if inits_bound else self.assign(slots, node.inits)
        if node.op == FOR:
            index = node.induction
            self.names[index] = self.namer.fresh(index.name or "i") if index.uses else "_"
            start, stop, step = (self.read(v) for v in node.bounds)
            bounds = [stop] if _is(start, 0) and _is(step, 1) else \
                [start, stop] if _is(step, 1) else [start, stop, step]
            body = self.block(node.body) + self.assign(slots, node.body.results)
            stmts.append(py.for_range(self.names[index], bounds, body))
            return stmts
        cond = self.block(node.cond)
        test = self.test(node.cond.results[0])
        body = self.block(node.body) + self.assign(slots, node.body.results)
        if cond:
            body = cond + [py.if_(py.not_(test), [py.break_()], [])] + body
            test = py.const(True)
        stmts.append(py.while_(test, body))
        return stmts

    # -- fusion ------------------------------------------------------------------------------
    def plan_fusion(self, block: Block) -> None:
        """Mark the block's values computed where they are read: an elementwise array read once,
        by an elementwise op of the same shape later in the block, and a number read once, by
        an op (not a region) later in the block, unless its expression reads an array and that
        op computes an array; with nothing between that writes an array,
        has an effect or is a region, and (for a value whose op may raise) nothing at all."""
        reads_arrays: set[Value] = set()  # inlined numbers whose expression reads an array
        for position, node in enumerate(block.nodes):
            if node.is_region or len(node.outputs) != 1 or node.op is pyops.constant:
                continue
            out = node.output
            if any(is_array(v.type) or v in reads_arrays for v in node.inputs):
                reads_arrays.add(out)
            if len(out.uses) != 1:
                continue
            user = out.uses[0].user
            if user is block:  # yielded: read by the assignment ending the block
                if not is_array(out.type) and not node.op.same_object \
                        and node.op.writes is None and not node.op.can_raise:
                    self.inlined.add(out)
                continue
            if user.parent is not block or user.is_region and not (
                    user.op == IF and user.inputs[0] is out):
                continue
            between = block.nodes[position + 1:block.index(user)]
            if any(n.is_region or n.op.effects or n.op.writes is not None for n in between):
                continue
            if between and node.op.can_raise:
                continue
            if is_array(out.type):
                if node.op.elementwise and not user.is_region and user.op.elementwise \
                        and user.output.type.shape == out.type.shape:
                    self.fused[out] = _Fused(node)
            elif not node.op.same_object and node.op.writes is None and not (
                    out in reads_arrays and any(is_array(o.type) for o in user.outputs)):
                # NOTE: a number read by an op computing an array is read inside its element
                # loop: inlined, an expression reading an array (a sum) would run per element
                # and see the elements that loop already overwrote in place
                self.inlined.add(out)


def _unshared_fresh(value: Value) -> bool:
    """A newly allocated array (`OpDef.fresh`) that nothing but its one reader holds."""
    node = value.producer
    return node is not None and not node.is_region and node.op.fresh and len(value.uses) == 1


def _simple(expr: ast.expr) -> bool:
    """A name or constant (reading it twice computes nothing twice)."""
    return isinstance(expr, ast.Name | ast.Constant) or (
        isinstance(expr, ast.UnaryOp) and isinstance(expr.operand, ast.Constant)) or (
        isinstance(expr, ast.Call) and all(isinstance(a, ast.Constant | ast.UnaryOp)
                                           for a in expr.args))


def _is(expr: ast.expr, number: int) -> bool:
    return isinstance(expr, ast.Constant) and type(expr.value) is int and expr.value == number
