"""Checks a storage plan: walks the graph in the order the generated code runs, tracking which
value each variable holds, and reports the reads that would find another value there.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..graph import FOR, IF, TRY, WHILE, Block, Graph, Node, Value
from .storage import Kind, Storage, always_raises


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
            elif node.op == TRY:
                self.try_(node)
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

    def try_(self, node: Node) -> None:
        """The except and finally blocks may start at any point of what runs before them (the
        statement that raised), so every variable written there is unreliable on entry."""
        merged = len(node.try_body.results)
        before = self.holds
        self.block(node.try_body)
        self.assign(node.outputs[:merged], node.try_body.results)
        ends = [self.holds]
        if node.handler is not None:
            self.holds = {**before, **self.written(node.try_body, node.outputs[:merged])}
            self.write_all(node.handler.params)
            self.block(node.handler)
            if not always_raises(node.handler):  # NOTE: else its yields are never reached
                self.assign(node.outputs[:merged], node.handler.results)
                ends.append(self.holds)
        self.holds = _merge(*ends) if len(ends) == 2 else ends[0]
        if node.finally_ is not None:
            for block in (node.try_body, node.handler):
                if block is not None:
                    self.holds.update(self.written(block, node.outputs[:merged]))
            self.block(node.finally_)
            self.assign(node.outputs[merged:], node.finally_.results)
        self.write_all(node.outputs)

    def written(self, block: Block, targets: Sequence[Value]) -> dict[Value, _Mixed]:
        """Every variable `block` (at any depth, its yields into `targets` too) may have
        written, marked as holding one of those values."""
        values = list(targets) + [p for n in block.walk() for b in n.blocks for p in b.params]
        values += [v for n in block.walk() for v in n.outputs]
        written: dict[Value, set[Value]] = {}
        for value in values:
            if self.st.kind[value] is Kind.VAR:
                written.setdefault(self.st.slot(value), set()).add(value)
        return {slot: _Mixed(frozenset(vs)) for slot, vs in written.items()}

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
