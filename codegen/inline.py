"""Which values generated code writes inside the one expression reading them instead of naming
them (`if x.sum() > 10:`, not `t = np.sum(x); t_1 = t > 10; if t_1:`), and which one-result Ifs
it writes as expressions (`while i < n and not brk:`, `y = a if c else b`).

A value is inlined only into the statement right after its producer (none lies between), where
that statement reads it once, unconditionally and before anything else it computes (so work and
errors keep their order); from the same user line (so the comments stay right); and only if the
user did not name it, or named it as the statement's own result (`x = x @ w.T` then `x = x + b`
becomes `x = x @ w.T + b`). Effectful and in-place nodes always keep their statements.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from ..graph import IF, WHILE, Block, Graph, Loc, Node, Value
from .lowering import Lowered
from .namer import same_variable

AND, OR, CHOOSE = "and", "or", "if"
"""How an If is written as an expression: `c and e`, `c or e`, `a if c else b`."""

@dataclass
class Inlining:
    """The plan: values written at their reader, and If nodes written as expressions."""
    values: set[Value] = field(default_factory=set)
    ifs: dict[Node, str] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class _Slot:
    """A read of `value` by the statement being built, in evaluation order."""
    value: Value
    usable: bool


_EVAL = object()
"""In a statement's evaluation sequence: some computation happens here."""

_ANY = "*"
"""The result name of a region's test or branch expression: it inlines named values too (a
name read once by `while c:` names nothing the reader needs)."""


def plan_inlining(graph: Graph, silent: set[Value], lowered: Mapping[Node, Lowered],
                  unbound: set[Value], return_loc: Loc | None) -> Inlining:
    """The plan for `graph`: `silent` values need no statement (constants), `unbound` ones may
    hold no binding; the return statement (at `return_loc`) is the body's last reader."""
    planner = _Planner(silent, lowered, unbound)
    sink = [_Slot(v, True) for v in graph.outputs] if return_loc is not None else None
    planner.regions(graph.body)
    planner.plan.values |= planner.block(graph.body, sink, return_loc)[0]
    return planner.plan


class _Planner:
    def __init__(self, silent: set[Value], lowered: Mapping[Node, Lowered],
                 unbound: set[Value]) -> None:
        self.silent, self.lowered, self.unbound = silent, lowered, unbound
        self.plan = Inlining()

    def regions(self, block: Block) -> None:
        """Plan the regions of `block` (each nested block once, innermost first)."""
        for node in block.nodes:
            if node.is_region:
                self.region(node)

    def block(self, block: Block, sink: list | None, loc: Loc | None
              ) -> tuple[set[Value], int]:
        """Plan the nodes of `block` backwards (its regions are planned already); `sink`
        reads its results (a while test, a return, an If written as an expression). Returns
        the values it would inline and how many statements the block keeps."""
        inlined: set[Value] = set()
        statements = 0
        sequence = None if sink is None else [*sink, _EVAL]
        result = _ANY if block.owner_node is not None else ""  # NOTE: no name to keep
        for node in reversed(block.nodes):
            if not node.is_region and all(v in self.silent for v in node.outputs):
                continue
            position = self.position(node, sequence, loc, result)
            if position is not None:
                sequence[position:position + 1] = [*self.reads(node), _EVAL]
                inlined.add(node.output)
                continue
            statements += 1
            sequence, loc = [*self.reads(node), _EVAL], node.loc
            result = node.outputs[0].name if len(node.outputs) == 1 else ""
        return inlined, statements

    def region(self, node: Node) -> None:
        """Plan the region's blocks; an If whose branches are single expressions becomes one."""
        for block in node.blocks:
            self.regions(block)
        form = _if_form(node, self.unbound)
        if form is not None:
            trials = [self.block(b, [_Slot(b.results[0], True)], node.loc) for b in node.blocks]
            if not any(statements for _, statements in trials):
                self.plan.values.update(*(inlined for inlined, _ in trials))
                self.plan.ifs[node] = form
                return
        for block in node.blocks:
            sink = [_Slot(block.results[0], True)] if node.op == WHILE and block is node.cond \
                else None
            self.plan.values |= self.block(block, sink, node.loc if sink else None)[0]

    def reads(self, node: Node) -> list[_Slot]:
        """What the node's statement reads, in order, and which reads may take an expression."""
        if node.is_region:
            return [_Slot(node.inputs[0], True)] if node.op == IF else []
        low = self.lowered[node]
        return [_Slot(node.inputs[i], i in low.form.once and i != low.inplace)
                for i in low.form.order]

    def position(self, node: Node, sequence: list | None, loc: Loc | None,
                 result: str) -> int | None:
        """Where in `sequence` the node's value may be written, if it may be inlined."""
        if sequence is None or not self.inlinable(node) or not _same_line(node.loc, loc):
            return None
        out = node.output
        if out.name and result is not _ANY and not (result and same_variable(out.name, result)):
            return None
        for position, entry in enumerate(sequence):
            if entry is _EVAL:
                return None
            if entry.value is out:
                return position if entry.usable and self.read_once(out) else None
        return None

    def inlinable(self, node: Node) -> bool:
        if node.is_region:
            return node in self.plan.ifs
        low = self.lowered[node]
        return len(node.outputs) == 1 and not node.effectful and low.inplace is None \
            and low.into_row is None and not self.unbound.intersection(node.inputs) \
            and node.output not in self.silent

    def read_once(self, value: Value) -> bool:
        """One reader; the test of `c and e` also counts once though the If yields it."""
        if len(value.uses) == 1:
            return True
        test = next((u.user for u in value.uses if isinstance(u.user, Node)), None)
        return test is not None and self.plan.ifs.get(test) in (AND, OR) and all(
            u.user is test or u.user in test.blocks for u in value.uses)


def _if_form(node: Node, unbound: set[Value]) -> str | None:
    """How the If could be one expression (its blocks permitting), or None."""
    if node.op != IF or len(node.outputs) != 1 or not node.output.uses or node.effectful:
        return None
    test = node.inputs[0]
    then, else_ = (b.results[0] for b in node.blocks)
    if else_ is test:
        form, others = AND, [then]
    elif then is test:
        form, others = OR, [else_]
    elif node.loc is not None:  # NOTE: `a if c else b` on one line: then both are on it too
        form, others = CHOOSE, [then, else_]
    else:
        return None
    # NOTE: a branch passing a carried value through (`brk` or True) reads best as a statement
    if any(v.producer is None or v in unbound for v in others):
        return None
    return form


def _same_line(inner: Loc | None, outer: Loc | None) -> bool:
    """True if both are shown as one user line (the lines of a layer, as the user's call)."""
    if inner is None:
        return True
    if outer is None:
        return False
    inner, outer = inner.user, outer.user
    return (inner.file, inner.line) == (outer.file, outer.line)


def operands(node: Node, ifs: Mapping[Node, str]) -> Sequence[Value]:
    """The values an op node, or an If written as an expression, reads when it is evaluated."""
    if node in ifs:
        return (node.inputs[0], *(b.results[0] for b in node.blocks))
    return node.inputs
