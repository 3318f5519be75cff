"""`PassManager`: runs a pipeline of passes, verifying and reporting after each one.

A pass is `run(graph, rewriter) -> bool` (did anything change). A pipeline step is a pass name,
or a group of names run round after round until a whole round changes nothing (passes enable
each other), so optimizing an optimized graph changes nothing. A failure inside a pass, or a
graph the verifier rejects after it, becomes `PassError` naming the pass and those before it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Union

from ..ir import Graph
from ..rewriter import Rewriter

Pass = Callable[[Graph, Rewriter], bool]
PassHook = Callable[["PassReport", Graph], None]
Step = Union[str, tuple[str, ...]]
"""A pass name, or a group of pass names repeated until a round changes nothing."""

MAX_ROUNDS = 8
"""Rounds a group may take; each round only removes or simplifies, so few are ever needed."""


class PassError(Exception):
    """A pass crashed or left an invalid graph."""

    def __init__(self, name: str, ran_before: tuple[str, ...], cause: BaseException) -> None:
        self.name, self.ran_before = name, ran_before
        before = ", ".join(ran_before) or "nothing"
        super().__init__(f"pass {name!r} failed (after: {before}): {type(cause).__name__}: {cause}")


@dataclass(frozen=True, slots=True)
class PassReport:
    """What one pass did: its name, whether it changed the graph, node count after, seconds."""
    name: str
    changed: bool
    nodes: int
    seconds: float


@dataclass
class PassManager:
    """Runs `pipeline` (names resolved in `passes`) over a graph, in place."""
    pipeline: tuple[Step, ...]
    passes: dict[str, Pass]
    verify_each: bool = False
    on_pass: PassHook | None = None
    reports: list[PassReport] = field(default_factory=list)

    def run(self, graph: Graph) -> Graph:
        ran: list[str] = []
        for step in self.pipeline:
            if isinstance(step, str):
                self.run_pass(step, graph, ran)
                continue
            for _ in range(MAX_ROUNDS):
                if not [name for name in step if self.run_pass(name, graph, ran)]:
                    break
        return graph

    def run_pass(self, name: str, graph: Graph, ran: list[str]) -> bool:
        """Run pass `name` once (then verify and report); True if it changed the graph."""
        from ..verifier import verify  # NOTE: lazy, the verifier imports the pass-free IR only
        start = time.perf_counter()
        try:
            changed = bool(self.passes[name](graph, Rewriter()))
            if self.verify_each:
                verify(graph)
        except Exception as exc:
            raise PassError(name, tuple(ran), exc) from exc
        report = PassReport(name, changed, sum(1 for _ in graph.walk()),
                            time.perf_counter() - start)
        self.reports.append(report)
        if self.on_pass is not None:
            self.on_pass(report, graph)
        ran.append(name)
        return changed
