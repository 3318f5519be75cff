"""Where each IR value lives in generated code: a local variable (values coalesced the way the
user's code shares one), an expression written at its use sites, or a module-level constant.
"""
from __future__ import annotations

import ast
import enum
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Sequence

from ..graph import FOR, IF, TRY, WHILE, Block, Graph, Loc, Node, NoneType, Value
from ..ops import python as pyops
from ..ops.shaping import dim_of
from .inline import operands, plan_inlining
from .literal import is_inline
from ..graph.ir import INPLACE_ATTR
from .lowering import Lowered
from .namer import UNUSED, Namer, same_variable
from .template import placeholders

_REBIND = "rebind"
_ALIAS = "alias"
_ALIASES = (pyops.depend, pyops.stop_gradient)
"""Ops whose result is their first input itself, spelled `x`."""


class Kind(enum.Enum):
    """How generated code refers to a value."""
    VAR = "a local variable"
    UNDEFINED = "a variable no path assigns: reading it raises UnboundLocalError"
    INLINE = "a literal written at each use"
    MODULE = "a module-level constant"
    NONE = "None (the result of print, assert, ...)"
    EXPR = "its producing expression, written at its single use"


@dataclass(eq=False)
class _Edge:
    a: Value
    b: Value
    mandatory: bool
    reason: str


class Storage:
    """The storage decision for every value of one graph.

    Values share a variable where the user's code had one: an If's result and the values its
    branches yield, a loop's carried values (before, in cond and body, after the loop), and a
    re-assignment `x = f(x)` of the same name hint. A loop's carried values and an in-place
    result must share one; the other merges are proposals, dropped (cheapest first) while
    `hazards.find_hazards` finds a read that would see its variable already overwritten.
    """

    def __init__(self, graph: Graph, lowered: dict[Node, Lowered],
                 return_loc: Loc | None = None) -> None:
        self.graph, self.lowered = graph, lowered
        self.order = {v: i for i, v in enumerate(_values_in_order(graph))}
        self.unbound = maybe_unbound(graph)
        self.kind = _classify(graph, self.unbound, lowered)
        silent = {v for v, k in self.kind.items() if k in _SILENT}
        plan = plan_inlining(graph, silent, lowered, self.unbound, return_loc)
        self.kind.update(dict.fromkeys(plan.values, Kind.EXPR))
        self.ifs = plan.ifs
        """If nodes written as one expression (`c and e`, `a if c else b`), by form."""
        _inline_tuples(graph, self.kind, self.unbound)
        self.dead = _dead_targets(graph)
        self.edges = _propose(graph, self)
        self.dropped: set[_Edge] = set()
        self.names: dict[Value, str] = {}
        self._regroup()

    # -- queries --------------------------------------------------------------------------
    def slot(self, value: Value) -> Value:
        """The representative of the variable a VAR value lives in."""
        parent = self._parent
        root = value
        while parent[root] is not root:
            parent[root] = parent[parent[root]]  # path halving
            root = parent[root]
        return root

    def name(self, value: Value) -> str:
        return self.names[self.slot(value)]

    def unbound_name(self, value: Value) -> str:
        """The variable an UNDEFINED value stands for, as Python's error message names it."""
        node = value.producer
        return node.attrs["name"] if node is not None and node.op is pyops.undefined \
            else value.name

    def constant(self, value: Value) -> Any:
        """The value of an INLINE, MODULE or literal-list constant."""
        return value.producer.attrs["value"]

    def reads(self, value: Value) -> Iterator[Value]:
        """The variables reading `value` reads (an EXPR reads its producer's inputs)."""
        kind = self.kind[value]
        if kind is Kind.VAR:
            yield value
        elif kind is Kind.EXPR:
            for v in self.operands(value.producer):
                yield from self.reads(v)

    def operands(self, node: Node) -> Sequence[Value]:
        """The values evaluating the node's expression reads (an If written as an expression
        reads its test and both branch results)."""
        return operands(node, self.ifs)

    def copy_plan(self, targets: Sequence[Value], sources: Sequence[Value]
                  ) -> tuple[list[tuple[Value, Value]], list[Value]]:
        """Region-boundary assignments `target = source`: the ones to emit, and the sources
        already in their target's variable. Undefined sources and dead targets need nothing."""
        copies, in_place = [], []
        for target, source in zip(targets, sources, strict=True):
            if self.kind[target] is not Kind.VAR or target in self.dead:
                continue
            if self.kind[source] is Kind.UNDEFINED:
                continue
            if self.kind[source] is Kind.VAR and self.slot(source) is self.slot(target):
                in_place.append(source)
            else:
                copies.append((target, source))
        return copies, in_place

    def splits_unbound(self, target: Value, source: Value) -> bool:
        """Whether `target = source` stands for a merge `resolve` had to drop although `source`
        may hold no binding: the copy may run while `source` is unbound, where the IR only
        passes the missing binding on (it must not raise there)."""
        return source in self.unbound and any(e.a is source and e.b is target
                                              for e in self.dropped)

    def left_unbound(self, targets: Sequence[Value], sources: Sequence[Value]) -> list[Value]:
        """The targets a region boundary leaves unassigned (their source is undefined)."""
        return [t for t, s in zip(targets, sources, strict=True) if self.kind[s] is Kind.UNDEFINED
                and self.kind[t] is Kind.VAR and t not in self.dead]

    # -- coalescing -----------------------------------------------------------------------
    def _regroup(self) -> None:
        """Union the kept edges; a variable's representative is its earliest member."""
        self._parent = {v: v for v in self.kind}
        with_input = {p: True for p in self.graph.inputs}
        self.accepted: list[_Edge] = []
        for edge in self.edges:
            a, b = self.slot(edge.a), self.slot(edge.b)
            if edge in self.dropped or a is b:
                continue
            if with_input.get(a) and with_input.get(b):
                continue  # NOTE: two function parameters can never share a name
            first, second = sorted((a, b), key=self.order.__getitem__)
            self._parent[second] = first
            with_input[first] = with_input.get(a, False) or with_input.get(b, False)
            self.accepted.append(edge)

    def resolve(self, hazards: Sequence[tuple[Value, Iterable[Value]]]) -> None:
        """Each `(reader, writers)`: `reader` is read while its variable holds one of `writers`.
        Drop the cheapest proposed merge on each path joining them (see `_cost`), the one
        nearest to `reader` among equals."""
        around: dict[Value, list[tuple[_Edge, Value]]] = {}
        for e in self.accepted:
            around.setdefault(e.a, []).append((e, e.b))
            around.setdefault(e.b, []).append((e, e.a))
        for i, (reader, writers) in enumerate(hazards):
            writer = min(writers, key=self.order.__getitem__)
            path = _path(around, reader, writer)
            droppable = [e for e in path if not e.mandatory]
            if not droppable and i == 0:
                _refuse(reader, path)
            # NOTE: later hazards of a walk may stem from earlier ones; the next walk rechecks
            if droppable and not self.dropped.intersection(droppable):
                self.dropped.add(min(droppable, key=self._cost))
        self._regroup()

    def _cost(self, edge: _Edge) -> int:
        """What dropping a merge costs: a new name (re-assignment), a copy, or a copy of a
        maybe-unbound value (which would raise UnboundLocalError where the IR does not)."""
        if edge.reason == _REBIND:
            return 0
        return 2 if edge.a in self.unbound else 1

    # -- naming ---------------------------------------------------------------------------
    def assign_names(self, namer: Namer, hidden: frozenset[Value] = frozenset()) -> None:
        """Name every variable after its members' hints (a parameter keeps its own), in
        program order: named variables first, then unnamed ones (`t`, `t_1`, ... never take a
        user's name). A loop index nothing reads is `_`. Values in `hidden` (inside regions a
        Numba kernel computes) need no name of this function."""
        members: dict[Value, list[Value]] = {}
        for value in sorted(self.kind, key=self.order.__getitem__):
            if self.kind[value] is Kind.VAR and value not in hidden:
                members.setdefault(self.slot(value), []).append(value)
        inputs = set(self.graph.inputs)  # NOTE: a parameter is its variable's earliest member
        hints = {root: root.name if root in inputs else _common_hint(group)
                 for root, group in members.items()}
        for root in sorted(members, key=lambda r: (not hints[r], self.order[r])):
            if len(members[root]) == 1 and _is_index(root) and not root.uses:
                self.names[root] = UNUSED
            else:
                self.names[root] = namer.fresh(hints[root] or self._derived_hint(root))

    def _derived_hint(self, value: Value) -> str:
        """A name for an unnamed value computed from one variable alone by a method, attribute
        or `np` function: `fc_weight.T` is `fc_weight_t`, `np.exp(x)` is `x_exp`."""
        node = value.producer
        low = self.lowered.get(node) if node is not None else None
        if low is None or low.inplace is not None \
                or sum(self.kind[v] is not Kind.INLINE for v in node.inputs) != 1:
            return ""
        tree = low.form.tree
        if isinstance(tree, ast.Call):
            if _is_np(tree.func) and tree.args:
                tree = ast.Attribute(value=tree.args[0], attr=tree.func.attr)
            else:
                tree = tree.func
        if not isinstance(tree, ast.Attribute) or not isinstance(tree.value, ast.Name):
            return ""
        source = dict(zip(placeholders(len(node.inputs)), node.inputs)).get(tree.value.id)
        if source is None or self.kind[source] is not Kind.VAR \
                or self.slot(source) not in self.names:
            return ""
        return f"{self.name(source)}_{tree.attr.lower()}"


def _is_np(func: ast.expr) -> bool:
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
        and func.value.id == "np"


def _common_hint(group: list[Value]) -> str:
    """The hint most members have, the earliest among equals: an in-place chain from a layer's
    `x` into the user's `h`, carried on as `h`, is named `h`."""
    counts = Counter(v.name for v in group if v.name)
    return max(counts, key=counts.__getitem__, default="")  # NOTE: the first maximum wins


def _path(around: dict[Value, list[tuple[_Edge, Value]]], start: Value, goal: Value
          ) -> list[_Edge]:
    """The edges joining `start` to `goal` in the forest `around`, start side first."""
    came: dict[Value, tuple[_Edge, Value]] = {}
    frontier = [start]
    while frontier and goal not in came:
        reached = []
        for value in frontier:
            for edge, other in around.get(value, ()):
                if other is not start and other not in came:
                    came[other] = (edge, value)
                    reached.append(other)
        frontier = reached
    path = []
    while goal is not start:
        edge, goal = came[goal]
        path.append(edge)
    return path[::-1]


def _refuse(reader: Value, path: list[_Edge]) -> None:
    culprit = next((e for e in path if e.reason == INPLACE_ATTR), None)
    if culprit is not None:
        raise ValueError(f"codegen: {culprit.a.producer.name} runs in place over "
                         f"%{culprit.b.name}, which is read afterwards ({INPLACE_ATTR} is only "
                         "valid on an input nothing reads later)")
    raise AssertionError(f"codegen: %{reader.name} is overwritten before it is read")


def _values_in_order(graph: Graph) -> Iterator[Value]:
    yield from graph.inputs
    for node in graph.walk():
        yield from node.outputs
        for block in node.blocks:
            yield from block.params


def _is_index(value: Value) -> bool:
    block = value.owner
    return isinstance(block, Block) and block.owner_node is not None \
        and block.owner_node.op == FOR and value.index == 0


_SILENT = (Kind.INLINE, Kind.MODULE, Kind.UNDEFINED)


def _classify(graph: Graph, unbound: set[Value], lowered: dict[Node, Lowered]
              ) -> dict[Value, Kind]:
    """Every value's kind, before inlining (which turns some VARs into EXPRs)."""
    kind = {v: Kind.VAR for v in _values_in_order(graph)}
    for node in graph.walk():
        if node.is_region:
            continue
        out = node.output
        if node.op is pyops.constant:
            value = node.attrs["value"]
            if isinstance(value, list):
                continue
            kind[out] = Kind.INLINE if is_inline(value) else Kind.MODULE
        elif node.op is pyops.undefined:
            kind[out] = Kind.UNDEFINED
        elif node.op is dim_of:  # NOTE: a size read at entry, written where it is used
            kind[out] = Kind.INLINE
        elif out.type == NoneType() and lowered[node].inplace is None:
            kind[out] = Kind.NONE
    kind.update(dict.fromkeys(_never_bound(graph), Kind.UNDEFINED))
    return kind


def _inline_tuples(graph: Graph, kind: dict[Value, Kind], unbound: set[Value]) -> None:
    """A tuple read once, later in the same block, is built where it is read (`return a, b`),
    if that moves no work: its items are variables or constants."""
    for node in graph.walk():
        if node.op is pyops.make_tuple and kind[node.output] is Kind.VAR \
                and _used_once_nearby(node.output) \
                and all(kind[v] is not Kind.EXPR or v.producer.op is pyops.make_tuple
                        for v in node.inputs) \
                and not unbound.intersection(node.inputs):  # NOTE: raise where Python would
            kind[node.output] = Kind.EXPR


def _never_bound(graph: Graph) -> set[Value]:
    """Region results (and carried params) every source of which is undefined: no statement
    would assign their variable, so reading it must raise like reading an undefined value."""
    sources = _slot_sources(graph)
    undefined = {n.output for n in graph.walk() if n.op is pyops.undefined}
    never = set(sources) | undefined
    changed = True
    while changed:  # NOTE: the greatest fixpoint: a loop may carry an unbound value around
        bound = {v for v in never if v in sources and not never.issuperset(sources[v])}
        never -= bound
        changed = bool(bound)
    return never - undefined


def _used_once_nearby(value: Value) -> bool:
    """One use, in the block that computes `value` (so inlining moves no work into a loop)."""
    if len(value.uses) != 1:
        return False
    user, block = value.uses[0].user, value.producer.parent
    return user is block or (isinstance(user, Node) and user.parent is block)


def maybe_unbound(graph: Graph) -> set[Value]:
    """Values that may hold no binding on some path (from `undefined`, through regions)."""
    sources = _slot_sources(graph)
    unbound = {n.output for n in graph.walk() if n.op is pyops.undefined}
    changed = True
    while changed:  # NOTE: the least fixpoint: unbound as soon as one source may be
        more = {v for v, srcs in sources.items() if v not in unbound and unbound.intersection(srcs)}
        unbound |= more
        changed = bool(more)
    return unbound


def _slot_sources(graph: Graph) -> dict[Value, list[Value]]:
    """Each region output and carried parameter -> the values that flow into its slot. A
    branch or loop body that always raises flows nothing: its yields are never reached."""
    sources: dict[Value, list[Value]] = {}
    for node in graph.walk():
        if not node.is_region:
            continue
        for k, group in enumerate(_carried_groups(node)):
            ends = _ends(node, k)
            flowing = [v for v, block in zip(node.incoming(k), ends)
                       if block is None or not always_raises(block)]
            sources.update(dict.fromkeys(group, flowing))
    return sources


def _ends(node: Node, k: int) -> list[Block | None]:
    """The blocks yielding the values `node.incoming(k)` lists (None: a loop's init)."""
    if node.op == IF:
        return list(node.blocks)
    if node.op == TRY:
        if k >= len(node.try_body.results):
            return [node.finally_]
        return [b for b in (node.try_body, node.handler) if b is not None]
    return [None, node.body]


def always_raises(block: Block) -> bool:
    """Whether the block raises before it ends (a `raise` among its own statements)."""
    return any(node.op in (pyops.raise_, pyops.reraise_) for node in block.nodes)


def _carried_groups(node: Node) -> list[tuple[Value, ...]]:
    """Per region result: the values naming it (If: the output; loops: cond/body params too)."""
    if node.op in (IF, TRY):
        return [(o,) for o in node.outputs]
    if node.op in (WHILE, FOR):
        return list(zip(*(node.carried(b) for b in node.blocks), node.outputs))
    return []


def _dead_targets(graph: Graph) -> set[Value]:
    """Region results nobody reads: the branches and loop bodies need not assign them."""
    dead = set()
    for node in graph.walk():
        for out, group in zip(node.outputs, _carried_groups(node)):
            if not any(v.uses for v in group):
                dead.add(out)
    return dead


def _compatible(a: Value, b: Value) -> bool:
    """Same user variable: equal hints up to a printer-style `_<n>` suffix, or one unnamed."""
    return not a.name or not b.name or same_variable(a.name, b.name)


def _propose(graph: Graph, storage: Storage) -> list[_Edge]:
    """Mandatory merges (region results, in-place results), then proposals in program order."""
    kind = storage.kind
    edges: list[_Edge] = []

    def propose(a: Value, b: Value, reason: str, force: bool = False) -> None:
        if kind[a] is Kind.VAR and kind[b] is Kind.VAR and (force or _compatible(a, b)):
            edges.append(_Edge(a, b, False, reason))

    for node in graph.walk():
        for group in _carried_groups(node):
            edges.extend(_Edge(v, group[-1], True, "carried") for v in group[:-1])
        if not node.is_region and INPLACE_ATTR in node.attrs:
            edge = _inplace_edge(node, storage)  # NOTE: checks every mark, even one not taken
            if storage.lowered[node].inplace is not None:
                edges.append(edge)
    for node in graph.walk():
        if node.op == IF and node not in storage.ifs:
            for block in node.blocks:
                _propose_yields(block, node.outputs, propose, storage)
        elif node.op in (WHILE, FOR):
            for init, out in zip(node.inits, node.outputs):
                propose(init, out, "init", init in storage.unbound)
            _propose_yields(node.body, node.outputs, propose, storage)
        elif node.op == TRY:
            merged = len(node.try_body.results)
            for block in (node.try_body, node.handler):
                if block is not None:
                    _propose_yields(block, node.outputs[:merged], propose, storage)
            if node.finally_ is not None:
                _propose_yields(node.finally_, node.outputs[merged:], propose, storage)
        elif node.op in _ALIASES and kind[node.output] is Kind.VAR:
            # NOTE: `depend(x, ...)` is x itself: sharing x's variable needs no statement,
            # and never copies an x that may be unbound (see Emitter.op_statements)
            propose(node.inputs[0], node.output, _ALIAS, force=True)
        elif kind[node.outputs[0]] is Kind.VAR and (node.is_region or
                                                     storage.lowered[node].inplace is None):
            out = node.output
            read = (r for v in storage.operands(node) for r in storage.reads(v))
            same = [v for v in read if v.name and out.name and same_variable(v.name, out.name)]
            if same:
                propose(out, same[0], _REBIND)
    return edges


def _propose_yields(block: Block, outputs: Sequence[Value], propose, storage: Storage) -> None:
    """Each value a branch or loop body yields (once) shares the region result's variable: an
    SSA phi becomes one Python variable, as the user wrote it."""
    seen: set[Value] = set()
    for value, out in zip(block.results, outputs):
        if value not in seen:
            propose(value, out, "yield", value in storage.unbound)
        seen.add(value)


def _inplace_edge(node: Node, storage: Storage) -> _Edge:
    buffer = node.inputs[node.attrs[INPLACE_ATTR]]  # NOTE: lowering checked the index
    if storage.kind[buffer] in _SILENT + (Kind.NONE,) or buffer in storage.graph.inputs:
        raise ValueError(f"codegen: {node.name} cannot run in place over %{buffer.name} "
                         f"({'a graph input' if buffer in storage.graph.inputs else 'a constant'}"
                         " is not a private buffer)")
    return _Edge(node.output, buffer, True, INPLACE_ATTR)
