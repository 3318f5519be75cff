"""Checks a storage plan: walks the graph in the order the generated code runs, tracking which
value each variable holds, and reports the reads that would find another value there.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..graph import FOR, IF, WHILE, Block, Graph, Node, Value
from .storage import Kind, Storage


@dataclass(frozen=True)
class Hazard:
    """`reader` is read while its variable holds one of `writers` instead."""
    reader: Value
    writers: frozenset[Value]


@dataclass(frozen=True)
class _Mixed:
    """A variable holding one of several values (branches disagreed, or a loop wrote it)."""
    writers: frozenset[Value]
    in_loop: bool = False
    """Written by an earlier iteration: a variable keeping its last iteration's value is what
    Python does too, so it does not count as a stale binding (see `assign`)."""


def find_hazards(graph: Graph, storage: Storage) -> list[Hazard]:
    """Reads the plan gets wrong; empty if every read sees its value. After a wrong read the
    walk goes on as if it had been right, so one walk finds most of them (fixing some may
    expose others: callers repeat until none is left)."""
    simulation = _Simulation(storage)
    simulation.run(graph)
    return simulation.hazards


class _Simulation:
    def __init__(self, storage: Storage) -> None:
        self.st = storage
        self.holds: dict[Value, Value | _Mixed] = {}
        self.hazards: list[Hazard] = []

    def run(self, graph: Graph) -> None:
        self.write_all(graph.inputs)
        self.block(graph.body)
        for value in graph.outputs:
            self.read(value)

    def block(self, block: Block) -> None:
        for node in block.nodes:
            if node.op == IF and node not in self.st.ifs:
                self.if_(node)
            elif node.op in (WHILE, FOR):
                self.loop(node)
            elif self.st.kind[node.output] is not Kind.EXPR:  # an EXPR is read where used
                for value in self.st.operands(node):
                    self.read(value)
                self.write_all(node.outputs)

    def read(self, value: Value) -> None:
        for var in self.st.reads(value):
            held = self.holds.get(self.st.slot(var))
            if held is var:
                continue
            assert held is not None, f"codegen: %{var.name} is read before it is computed"
            writers = {held} if isinstance(held, Value) else set(held.writers) - {var}
            self.hazards.append(Hazard(var, frozenset(writers)))
            self.holds[self.st.slot(var)] = var

    def write_all(self, values: Sequence[Value]) -> None:
        for value in values:
            if self.st.kind[value] is Kind.VAR:
                self.holds[self.st.slot(value)] = value

    def assign(self, targets: Sequence[Value], sources: Sequence[Value]) -> None:
        """A parallel assignment at a region boundary: every source is read, then written. A
        target left unbound must not find an earlier value of this path in its variable (it
        would read that instead of raising UnboundLocalError)."""
        copies, in_place = self.st.copy_plan(targets, sources)
        for value in [s for _, s in copies] + in_place:
            self.read(value)
        for target in self.st.left_unbound(targets, sources):
            held = self.holds.get(self.st.slot(target))
            earlier_iteration = isinstance(held, _Mixed) and held.in_loop
            stale = _writers(held) - {target}
            if stale and not earlier_iteration:
                self.hazards.append(Hazard(target, frozenset(stale)))
        self.write_all([t for t, _ in copies])

    def if_(self, node: Node) -> None:
        self.read(node.inputs[0])
        before, arms = self.holds, []
        for block in node.blocks:
            self.holds = dict(before)
            self.block(block)
            self.assign(node.outputs, block.results)
            arms.append(self.holds)
        self.holds = _merge(*arms)
        self.write_all(node.outputs)

    def loop(self, node: Node) -> None:
        body = node.body
        self.assign(node.outputs, node.inits)
        if node.op != WHILE:
            for bound in node.bounds:  # NOTE: range() is evaluated after the inits
                self.read(bound)
        inside = self.clobber(node)
        if node.op == WHILE:
            self.write_all(node.cond.params)
            self.block(node.cond)
            self.read(node.cond.results[0])
            for param in node.cond.params:  # the body (or the code after) reads them next
                self.read(param)
        self.write_all(body.params)
        self.block(body)
        self.assign(node.outputs, body.results)
        self.holds.update(inside)
        self.write_all(node.outputs)

    def clobber(self, node: Node) -> dict[Value, _Mixed]:
        """Mark every variable written inside the loop as unreliable: an iteration may have
        overwritten it before this one reads it. Returns those marks."""
        own = {self.st.slot(p) for b in node.blocks for p in b.params}
        written: dict[Value, set[Value]] = {}
        for inner in (n for b in node.blocks for n in b.walk()):
            values = list(inner.outputs) + [p for b in inner.blocks for p in b.params]
            for value in values:
                if self.st.kind[value] is Kind.VAR:
                    written.setdefault(self.st.slot(value), set()).add(value)
        marks = {slot: _Mixed(frozenset(vs), in_loop=True) for slot, vs in written.items()
                 if slot not in own}
        self.holds.update(marks)
        return marks


def _merge(a: dict[Value, Value | _Mixed], b: dict[Value, Value | _Mixed]
           ) -> dict[Value, Value | _Mixed]:
    merged = dict(a)
    for slot in a.keys() | b.keys():
        x, y = a.get(slot), b.get(slot)
        if x is not y:
            merged[slot] = _Mixed(frozenset(_writers(x) | _writers(y)))
    return merged


def _writers(held: Value | _Mixed | None) -> set[Value]:
    if held is None:
        return set()
    return {held} if isinstance(held, Value) else set(held.writers)
