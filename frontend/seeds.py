"""Seeds for nested loops. A loop region is built in rounds until its carried variables settle
(see loops), and each round builds the loops nested in its body again: from scratch, nested
loops would cost 2^depth rounds. Instead each loop keeps, for every loop built in its body (by
AST node and occurrence), the carries that loop settled on and the seeds of its own body; when
the next round builds that loop again with the same variables entering it, the loop starts from
what it settled on and settles in one round. A later round only ever widens what enters a
nested loop, so a seed never makes a loop's variables wider than building from scratch would."""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, Iterator

import gast

PLAIN = (bool, int, float, str, type(None))


class CarryState(Enum):
    """What a loop-carried variable is while its loop region is built (`loops.Carry`)."""
    CONST = "const"
    """A compile-time constant the body leaves unchanged."""
    UNBOUND = "unbound"
    """Not bound before the loop."""
    VAR = "var"
    """A block parameter of a type."""
    TUPLE = "tuple"
    """A tuple (or dict) whose items are carried one by one."""


@dataclass
class Seed:
    """What one loop settled on: its entry signature, final carries, and its body's seeds."""
    entry: tuple[Any, ...]
    carries: list[Any]
    inner: Seeds


@dataclass
class Seeds:
    """The seeds of the loops built in one loop's body: those of the previous rounds, those
    of this round, and how often each loop node was met in this round."""
    previous: dict[tuple[int, int], Seed] = field(default_factory=dict)
    current: dict[tuple[int, int], Seed] = field(default_factory=dict)
    seen: dict[int, int] = field(default_factory=dict)

    def next_round(self) -> None:
        """Start a round: what the last one settled on becomes the seeds."""
        self.previous.update(self.current)
        self.current, self.seen = {}, {}

    def claim(self, node: gast.AST) -> tuple[tuple[int, int], Seed | None]:
        """The key of this occurrence of loop `node` in the round, and its seed if any."""
        n = self.seen.get(id(node), 0)
        self.seen[id(node)] = n + 1
        key = (id(node), n)
        return key, self.previous.get(key)


def signature(carries: list[Any]) -> tuple[Any, ...]:
    """What enters a loop: each carried variable's state, type or constant."""
    return tuple(_signature(c) for c in carries)


def _signature(c: Any) -> Any:
    if c.state == CarryState.CONST:
        value = c.init
        return (c.name, CarryState.CONST, type(value),
                value if isinstance(value, PLAIN) else id(value))
    if c.state == CarryState.TUPLE:
        return (c.name, CarryState.TUPLE, c.keys, tuple(_signature(x) for x in c.items))
    return (c.name, c.state, c.type, c.kind)


def adopt(carries: list[Any], seed: Seed, fresh: Callable[[str], Any]) -> list[Any]:
    """`carries` (as they enter the loop, with `seed.entry`'s signature) started from the
    states the seed settled on; `fresh(name)` makes the carry of a name only the seed has (a
    variable written through an alias, found while settling)."""
    by_name = {c.name: c for c in carries}
    out = list(carries)
    for s in seed.carries:
        c = by_name.get(s.name)
        if c is None:
            c = fresh(s.name)
            out.append(c)
        _adopt(c, s)
    return out


def _adopt(c: Any, s: Any) -> None:
    if s.state == CarryState.VAR and c.state is not CarryState.TUPLE:
        c.state, c.type, c.kind = CarryState.VAR, s.type, s.kind
    elif s.state == CarryState.TUPLE and c.state == CarryState.TUPLE and c.keys == s.keys and len(
            c.items) == len(s.items):
        for item, settled in zip(c.items, s.items):
            _adopt(item, settled)


class Seeding:
    """One loop region's use of seeds: the seed it starts from (claimed from the enclosing
    loop's `Seeds`, the top of `stack`), and the seeds of its own body."""

    def __init__(self, stack: list[Seeds], node: gast.AST, carries: list[Any],
                 fresh: Callable[[str], Any]) -> None:
        self.stack = stack
        self.parent = stack[-1] if stack else None
        self.entry = signature(carries)
        self.carries, self.inner = carries, Seeds()
        self.key: tuple[int, int] | None = None
        if self.parent is not None:
            self.key, seed = self.parent.claim(node)
            if seed is not None and seed.entry == self.entry:
                self.carries, self.inner = adopt(carries, seed, fresh), seed.inner

    @contextmanager
    def round(self) -> Iterator[None]:
        """Build one round of the body: nested loops claim their seeds from this loop."""
        self.inner.next_round()
        self.stack.append(self.inner)
        try:
            yield
        finally:
            self.stack.pop()

    def settled(self, carries: list[Any]) -> None:
        """The loop is built: remember what it settled on for the enclosing loop's next round."""
        if self.parent is not None and self.key is not None:
            self.parent.current[self.key] = Seed(self.entry, carries, self.inner)
