"""Reverse-mode automatic differentiation as an IR transform.

`differentiate(graph, seeds, wrt)` appends to a graph the nodes that compute the adjoints of the
values `wrt` given adjoint seeds for some of its values (usually its result). The backward is
ordinary IR, so every pass optimizes it and codegen prints it. Regions map to regions:

- an op: its OpDef's `grad` rule (written with other ops in `ops/`), each input's adjoint summed
  back to that input's shape;
- `If`: an If on the same condition whose arms hold the arms' backward passes;
- `While` / `For`: the forward loop records what the backward reads on a tape (a list per
  recorded value, appended each iteration) and its trip count; a For loop running the
  iterations backwards reads the tape and carries the adjoints of the carried values and of the
  outer values the body reads;
- `Try`: the finally block's backward, then the try block's; with an except block, the Try gains
  a flag output (True when a handler ran) and the try block's backward sits in an If on it whose
  other arm raises at run time naming the try line (a handler's path is not differentiated).

A forward value inside a region that the backward reads is exported: an If gains an output (the
other arm yields `undefined`), so does a Try (its except block yields a placeholder), a loop
gains a tape. Only floating-point values (and tuples and lists holding them) have adjoints:
integer counters, flags (break, continue, return), strings and None have none. A value a later
in-place write changes is copied where it is made, so the backward reads what the forward read.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from ..ops import Dyn
from ..ops import python as pyops
from ..ops.opdef import NO_GRAD
from .analysis import (NOT_CONSTANT, active_values, constant_of, differentiable, memory_roots,
                       written_roots)
from .builder import Builder, InsertPoint
from .ir import FOR, IF, INDEX_TYPE, TRY, WHILE, Block, Graph, Loc, Node, Value
from .types import ListType, Scalar, Tensor, TupleType, Type
from .autodiff_rules import _expand, _RuleContext
from .tapes import TAPE_ATTR, _exported_by_if, _read_from_tape  # noqa: F401 (TAPE_ATTR re-exported)

TupleAdjoint = list
"""The adjoint of a tuple value, element by element (None where no adjoint flows); it becomes a
`make_tuple` value only where it crosses a region boundary."""
Adjoint = Any
"""A `Value`, a `TupleAdjoint`, or None (zero)."""


class NotDifferentiable(Exception):
    """Differentiation cannot go through `node` (its op has no gradient rule, or the program
    needs something the transform cannot record); the caller names the user's line."""

    def __init__(self, message: str, node: Node | None = None) -> None:
        super().__init__(message)
        self.node = node

    @property
    def loc(self) -> Loc | None:
        return None if self.node is None else self.node.loc


def differentiate(graph: Graph, seeds: Mapping[Value, Value], wrt: Sequence[Value],
                  nodes: Sequence[Node] | None = None) -> list[Value | None]:
    """Append the backward pass to `graph`: the adjoints of `wrt` when the values in `seeds`
    have the given adjoints. None where no adjoint flows (zero). Raises NotDifferentiable
    naming the node it cannot go through.

    `nodes`: differentiate only these consecutive nodes of one block, which must end it (the
    inlined forward of a gradient function called inside compiled code); the backward is
    appended to that block, and `wrt` may be any values the nodes read. Default: the whole
    graph body."""
    if nodes is None:
        nodes = list(graph.body.nodes)
    block = nodes[0].parent if nodes else graph.body
    nodes = _expand(nodes)
    transform = _Transform(graph, block, nodes, active_values(nodes, wrt))
    top = transform.top
    for value, seed in seeds.items():
        transform.contribute(top, value, transform.split(top, seed, value.type))
    transform.backprop_block(top)
    return [transform.materialize(top, top.adj.get(v), v) if v in top.adj else None
            for v in wrt]


@dataclass(eq=False)
class _Scope:
    """The backward pass of one forward block: where its nodes go and what it has found."""
    forward: Block
    block: Block
    builder: Builder
    parent: _Scope | None = None
    region: Node | None = None
    """The forward region owning `forward` (None for the graph body)."""
    adj: dict[Value, Adjoint] = field(default_factory=dict)
    """Adjoints of values defined in `forward`."""
    escaping: dict[Value, Adjoint] = field(default_factory=dict)
    """Adjoints of values defined outside `forward`, to hand to the enclosing scope."""
    primal: dict[Value, Value] = field(default_factory=dict)
    """Forward value -> a value `block` can read holding it (exports, tape reads)."""
    nodes: Sequence[Node] | None = None
    """The top scope: the forward nodes to differentiate (None: all of `forward`'s)."""
    accumulators: dict[Value, Value] = field(default_factory=dict)
    """Loop bodies: escaping value -> the backward loop's parameter accumulating its adjoint."""
    position: Value | None = None
    """Loop bodies: the forward iteration this backward iteration undoes (0, 1, ...)."""


def _defined_in(value: Value, block: Block) -> bool:
    owner = value.owner
    return owner is block or (isinstance(owner, Node) and owner.parent is block)


class _Transform:
    """One differentiation: the scopes, the tapes and snapshots made so far."""

    def __init__(self, graph: Graph, block: Block, nodes: Sequence[Node],
                 active: set[Value]) -> None:
        self.graph = graph
        self.active = active
        self.top = _Scope(block, block, Builder(InsertPoint.at_end(block)), nodes=nodes)
        self.written = written_roots(graph)
        self.snapshots: dict[Value, Value] = {}
        self.trips: dict[Node, Value] = {}
        self.handler_flags: dict[Node, Value] = {}

    # -- adjoint bookkeeping -------------------------------------------------------------
    def contribute(self, scope: _Scope, value: Value, adjoint: Adjoint) -> None:
        """Add `adjoint` to what `value` receives."""
        if adjoint is None or value not in self.active:
            return
        if scope.parent is None or _defined_in(value, scope.forward):
            scope.adj[value] = self.add(scope, scope.adj.get(value), adjoint, value)
            return
        if scope.position is not None and value not in scope.accumulators:
            param = scope.block.add_param(_adjoint_type(value.type), f"d{value.name}")
            scope.accumulators[value] = param
            scope.escaping[value] = self.split(scope, param, value.type)
        scope.escaping[value] = self.add(scope, scope.escaping.get(value), adjoint, value)

    def add(self, scope: _Scope, a: Adjoint, b: Adjoint, value: Value) -> Adjoint:
        if a is None:
            return b
        if b is None:
            return a
        if isinstance(value.type, TupleType):
            return [self.add(scope, x, y, _Typed(t)) for x, y, t in
                    zip(a, b, value.type.elements)]
        if isinstance(value.type, ListType):
            for acc, one in ((a, b), (b, a)):
                node = one.producer
                if node is not None and not node.is_region and node.op.name == "index_add":
                    # NOTE: one item's part (a region's output, an If's merged list, is whole)
                    return scope.builder.op("list_add_at", acc, node.inputs[1], *node.inputs[2:],
                                            index=node.attrs["index"], name=_grad_name(value))
            return scope.builder.op("list_add", a, b, name=_grad_name(value))
        for acc, one in ((a, b), (b, a)):
            node = one.producer
            if node is not None and not node.is_region and node.op.name == "index_add" \
                    and acc.type == one.type \
                    and not one.uses:  # NOTE: `dx[t] += g`, not dx + (zeros with g at t)
                return scope.builder.op("index_add_into", acc, node.inputs[1], *node.inputs[2:],
                                        index=node.attrs["index"], name=_grad_name(value))
        return scope.builder.op("add", a, b, name=_grad_name(value))

    def split(self, scope: _Scope, adjoint: Value | None, t: Type) -> Adjoint:
        """An adjoint value as `contribute` keeps it (tuples element by element)."""
        if adjoint is None or not isinstance(t, TupleType):
            return adjoint
        return [self.split(scope, scope.builder.op("tuple_getitem", adjoint, index=i), e)
                if differentiable(e) else None for i, e in enumerate(t.elements)]

    def materialize(self, scope: _Scope, adjoint: Adjoint, value: Value | _Typed) -> Value:
        """`adjoint` of `value` as one IR value readable in `scope` (zeros where None)."""
        t = value.type
        if isinstance(t, TupleType):
            parts = adjoint or [None] * len(t.elements)
            items = [self.materialize(scope, a, _Element(value, i, e))
                     for i, (a, e) in enumerate(zip(parts, t.elements))]
            return scope.builder.op("make_tuple", *items)
        if adjoint is None:
            return self.zeros(scope, value)
        return adjoint

    def zeros(self, scope: _Scope, value: Value | _Typed) -> Value:
        """A zero adjoint for `value`, readable in `scope`."""
        t = value.type
        b = scope.builder
        if isinstance(t, Tensor) and t.is_symbolic:  # NOTE: a symbolic size is fine in `shape`
            return b.op("zeros", shape=t.shape, dtype=t.dtype if differentiable(t) else
                        np.dtype(np.float64))
        if isinstance(t, Scalar):
            return b.constant(0.0)
        if isinstance(t, Tensor) and isinstance(value, Value | _Element):
            return b.op("zeros_like", self.readable(scope, value))
        if isinstance(t, ListType) and isinstance(value, Value | _Element):
            return b.op("list_zeros_like", self.readable(scope, value))
        raise NotDifferentiable(f"cannot make a zero adjoint of type {t}")

    def readable(self, scope: _Scope, value: Value | _Element) -> Value:
        if isinstance(value, _Element):
            whole = self.readable(scope, value.tuple)
            return scope.builder.op("tuple_getitem", whole, index=value.index)
        return self.primal(scope, value)

    # -- reading forward values ----------------------------------------------------------
    def primal(self, scope: _Scope, value: Value) -> Value:
        """A value readable in `scope.block` that holds forward `value` as the forward saw it."""
        if scope.parent is None:
            return self.snapshot(value)
        if value in scope.primal:
            return scope.primal[value]
        if value.producer is not None and value.producer.op is pyops.constant:
            found = scope.builder.constant(value.producer.attrs["value"])  # cheaper than saving
            scope.primal[value] = found
            return found
        if _defined_in(value, scope.forward):
            found = self.export(scope, value)
        else:
            found = self.primal(scope.parent, value)
        scope.primal[value] = found
        return found

    def snapshot(self, value: Value) -> Value:
        """`value`, or a copy made where it is defined if a later in-place write may change
        it (a write through `x[i] = v`, `x += 1` or an alias)."""
        if value in self.snapshots:
            return self.snapshots[value]
        copy = value
        if _read_from_tape(value) or _exported_by_if(value):
            # NOTE: saved by an earlier differentiation (and None where an If arm did not
            # run: a placeholder has nothing to copy)
            self.snapshots[value] = value
            return value
        if isinstance(value.type, Tensor | ListType) and memory_roots(value) & self.written:
            owner = value.owner
            ip = InsertPoint.after(owner) if isinstance(owner, Node) else \
                InsertPoint.at_start(owner)
            op = "list_copy" if isinstance(value.type, ListType) else "copy"
            copy = Builder(ip, getattr(owner, "loc", None)).op(
                op, value, name=f"{value.name}_saved" if value.name else "")
        self.snapshots[value] = copy
        return copy

    def export(self, scope: _Scope, value: Value) -> Value:
        """Make `value`, defined in the region block `scope.forward`, readable in `scope`."""
        region = scope.region
        assert region is not None
        if region.op == IF:
            return self.primal(scope.parent, self.if_output(region, scope.forward, value))
        if region.op == TRY:
            return self.primal(scope.parent, self.try_output(region, scope.forward, value))
        if region.op == FOR and value is region.induction:
            start, _, step = (self.primal(scope.parent, v) for v in region.bounds)
            b = scope.builder
            return b.op("add", start, b.op("mul", scope.position, step), name=value.name)
        tape = self.primal(scope.parent, self.tape(region, value))
        return scope.builder.op("getitem", tape, scope.position, index=(Dyn(0),),
                                name=value.name)

    def if_output(self, region: Node, arm: Block, value: Value) -> Value:
        """A new output of If `region`: `value` from `arm`, unbound from the other arm."""
        saved = self.snapshot(value)
        other = region.blocks[1] if arm is region.blocks[0] else region.blocks[0]
        # NOTE: not `undefined`: a loop around the If may record the output on every trip
        absent = Builder(InsertPoint.at_end(other)).op("placeholder")
        arm.set_results([*arm.results, saved])
        other.set_results([*other.results, absent])
        out = region.add_output(value.type, value.name)
        self.snapshots[out] = out  # NOTE: already a copy where one is needed (and None on
        return out                 # the other arm, so never copied again outside)

    def try_output(self, region: Node, block: Block, value: Value) -> Value:
        """A new output of Try `region`: `value` from its try or finally block `block` (the
        except block yields a placeholder: the backward refuses that path)."""
        saved = self.snapshot(value)
        block.set_results([*block.results, saved])
        if block is region.finally_:
            out = region.add_output(value.type, value.name)
        else:
            handler = region.handler
            if handler is not None:
                absent = Builder(InsertPoint.at_end(handler)).op("placeholder")
                handler.set_results([*handler.results, absent])
            out = region.add_output(value.type, value.name, at=len(block.results) - 1)
        self.snapshots[out] = out
        return out

    def handler_ran(self, region: Node) -> Value:
        """A Try output made for the backward: False when the try block completed, True
        when the except block ran."""
        if region not in self.handler_flags:
            body, handler = region.try_body, region.handler
            no = Builder(InsertPoint.at_end(body), region.loc).constant(False)
            yes = Builder(InsertPoint.at_end(handler), region.loc).constant(True)
            body.set_results([*body.results, no])
            handler.set_results([*handler.results, yes])
            self.handler_flags[region] = region.add_output(no.type, "handler_ran",
                                                           at=len(body.results) - 1)
        return self.handler_flags[region]

    def tape(self, loop: Node, value: Value) -> Value:
        """The list of `value`'s per-iteration values, recorded by loop `loop`."""
        saved = self.snapshot(value)
        before = Builder(InsertPoint.before(loop), loop.loc)
        empty = before.op("list_new", name=f"{value.name or 't'}_tape")
        empty.producer.attrs[TAPE_ATTR] = True
        param, out = loop.add_carried(empty, ListType(value.type), empty.name)
        loop.control_inputs.append(empty.producer)
        body = loop.body
        appended = Builder(InsertPoint.at_end(body), loop.loc).op(
            "list_append", param, saved, name=empty.name)
        body.set_result(len(body.results) - 1, appended)
        self.snapshots[out] = out  # NOTE: only the backward reads the tape
        return out

    def trip_count(self, scope: _Scope, loop: Node) -> Value:
        """How many times `loop`'s body ran, readable in `scope` (the loop's own scope's
        parent)."""
        if loop.op == FOR:
            bounds = [constant_of(v) for v in loop.bounds]
            if all(type(b) is int for b in bounds):
                return scope.builder.constant(len(range(*bounds)))
        if loop not in self.trips:
            zero = Builder(InsertPoint.before(loop), loop.loc).constant(0)
            param, out = loop.add_carried(zero, INDEX_TYPE, "trips")
            body = loop.body
            step = Builder(InsertPoint.at_end(body), loop.loc)
            body.set_result(len(body.results) - 1, step.op("add", param, step.constant(1)))
            self.trips[loop] = out
        return self.primal(scope, self.trips[loop])

    # -- walking the forward graph backwards ---------------------------------------------
    def backprop_block(self, scope: _Scope) -> None:
        nodes = scope.forward.nodes if scope.nodes is None else scope.nodes
        for node in reversed(list(nodes)):
            if not any(scope.adj.get(out) is not None for out in node.outputs):
                continue
            if node.op == IF:
                self.backprop_if(scope, node)
            elif node.op in (WHILE, FOR):
                self.backprop_loop(scope, node)
            elif node.op == TRY:
                self.backprop_try(scope, node)
            else:
                self.backprop_op(scope, node)

    def backprop_op(self, scope: _Scope, node: Node) -> None:
        rule = node.op.grad
        if rule is NO_GRAD:
            return
        if rule is None:
            raise NotDifferentiable(f"amber has no gradient rule for `{node.name}`", node)
        context = _RuleContext(self, scope, node, scope.adj.get(node.output))
        with _located(scope.builder, node.loc):
            try:
                results = rule(context)
            except NotImplementedError as err:
                raise NotDifferentiable(str(err), node) from None
            for value, adjoint in zip(node.inputs, results):
                if adjoint is not None and value in self.active:
                    self.contribute(scope, value, context.fit(adjoint, value))

    def backprop_if(self, scope: _Scope, node: Node) -> None:
        arms = []
        for arm in node.blocks:
            inner = self.child(scope, arm, node)
            for result, out in zip(arm.results, node.outputs):
                self.contribute(inner, result, scope.adj.get(out))
            self.backprop_block(inner)
            arms.append(inner)
        escaping = list(dict.fromkeys(v for inner in arms for v in inner.escaping))
        for inner in arms:
            inner.block.set_results([self.materialize(inner, inner.escaping.get(v), v)
                                     for v in escaping])
        cond = self.primal(scope, node.inputs[0])
        region = Node(IF, [cond], {}, [_adjoint_type(v.type) for v in escaping],
                      [_grad_name(v) for v in escaping], [inner.block for inner in arms],
                      loc=node.loc)
        scope.builder.insert(region)
        for value, out in zip(escaping, region.outputs):
            self.contribute(scope, value, self.split(scope, out, value.type))

    def backprop_try(self, scope: _Scope, node: Node) -> None:
        """The finally block's backward, then the try block's: straight into `scope` when
        there is no except block (reaching here, the try block completed), else inside an If
        on whether the except block ran, whose taken side refuses at run time."""
        merged = len(node.try_body.results)
        final = node.finally_
        if final is not None:
            inner = _Scope(final, scope.block, scope.builder, scope, node)
            for result, out in zip(final.results, node.outputs[merged:]):
                self.contribute(inner, result, scope.adj.get(out))
            self.backprop_block(inner)
            self.hand_out(scope, inner)
        if node.handler is None:
            inner = _Scope(node.try_body, scope.block, scope.builder, scope, node)
            for result, out in zip(node.try_body.results, node.outputs[:merged]):
                self.contribute(inner, result, scope.adj.get(out))
            self.backprop_block(inner)
            self.hand_out(scope, inner)
            return
        inner = self.child(scope, node.try_body, node)
        for result, out in zip(node.try_body.results, node.outputs[:merged]):
            self.contribute(inner, result, scope.adj.get(out))
        self.backprop_block(inner)
        escaping = list(inner.escaping)
        inner.block.set_results([self.materialize(inner, inner.escaping[v], v)
                                 for v in escaping])
        refusing = self.child(scope, node.handler, node)
        refused, b = refusing.block, refusing.builder
        where = node.loc.user if node.loc is not None else "a try statement"
        b.op("raise", b.constant(
            f"{where}: the gradient of an except path is not supported (an exception was "
            "caught in this try statement); differentiate inputs for which nothing raises, or "
            "compute the differentiated value outside the try"), exc_type=NotImplementedError)
        # NOTE: zeros, not placeholders, after the raise: batching (jacrev) broadcasts them
        refused.set_results([self.materialize(refusing, None, v) for v in escaping])
        ran = self.primal(scope, self.handler_ran(node))
        region = Node(IF, [ran], {}, [_adjoint_type(v.type) for v in escaping],
                      [_grad_name(v) for v in escaping], [refused, inner.block], loc=node.loc)
        scope.builder.insert(region)
        for value, out in zip(escaping, region.outputs):
            self.contribute(scope, value, self.split(scope, out, value.type))

    def hand_out(self, scope: _Scope, inner: _Scope) -> None:
        """Give `scope` the adjoints a same-block `inner` scope found for outer values."""
        for value, adjoint in inner.escaping.items():
            self.contribute(scope, value, adjoint)

    def backprop_loop(self, scope: _Scope, node: Node) -> None:
        slots = [k for k, out in enumerate(node.outputs) if differentiable(out.type)]
        trips = self.trip_count(scope, node)
        inner = self.child(scope, node.body, node)
        inner.position = inner.block.add_param(INDEX_TYPE, "k")
        carried = node.carried(node.body)
        incoming = {k: inner.block.add_param(_adjoint_type(node.outputs[k].type),
                                             _grad_name(node.outputs[k])) for k in slots}
        for k, param in incoming.items():
            self.contribute(inner, node.body.results[k], self.split(inner, param,
                                                                      carried[k].type))
        self.backprop_block(inner)
        outer = list(inner.accumulators)
        inner.block.set_results(
            [self.materialize(inner, inner.adj.get(carried[k]), carried[k]) for k in slots]
            + [self.materialize(inner, inner.escaping[v], v) for v in outer])
        b = scope.builder
        inits = [self.materialize(scope, scope.adj.get(node.outputs[k]), node.outputs[k])
                 for k in slots] + [self.zeros(scope, v) for v in outer]
        last = b.op("sub", trips, b.constant(1)) if constant_of(trips) is NOT_CONSTANT \
            else b.constant(constant_of(trips) - 1)
        region = Node(FOR, [last, b.constant(-1), b.constant(-1), *inits], {},
                      [v.type for v in inits], [v.name for v in inits], [inner.block],
                      loc=node.loc)
        b.insert(region)
        for k, out in zip(slots, region.outputs):
            self.contribute(scope, node.inits[k], self.split(scope, out, node.outputs[k].type))
        for value, out in zip(outer, region.outputs[len(slots):]):
            self.contribute(scope, value, self.split(scope, out, value.type))

    def child(self, scope: _Scope, forward: Block, region: Node) -> _Scope:
        block = Block()
        return _Scope(forward, block, Builder(InsertPoint.at_end(block), region.loc), scope,
                      region)



@dataclass(frozen=True)
class _Typed:
    """Stands for a value of type `type` where only the type matters (tuple elements)."""
    type: Type


@dataclass(frozen=True)
class _Element:
    """Element `index` (of type `type`) of the tuple value `tuple`."""
    tuple: Value
    index: int
    type: Type


def _adjoint_type(t: Type) -> Type:
    return t


def _grad_name(value: Any) -> str:
    name = getattr(value, "name", "")
    return f"d{name}" if name else ""


class _located:
    """Give the nodes built inside the `with` the location `loc` (the forward line)."""

    def __init__(self, builder: Builder, loc: Loc | None) -> None:
        self.builder, self.loc = builder, loc

    def __enter__(self) -> None:
        self.saved, self.builder.loc = self.builder.loc, self.loc

    def __exit__(self, *exc: Any) -> None:
        self.builder.loc = self.saved
