"""`PassManager`: runs a pipeline of passes, verifying and reporting after each one.

A pass is `run(graph, rewriter) -> bool` (did anything change). A failure inside a pass, or a
graph the verifier rejects after it, becomes `PassError` naming the pass and those before it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from ..ir import Graph, Rewriter

Pass = Callable[[Graph, Rewriter], bool]
PassHook = Callable[["PassReport", Graph], None]


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
    pipeline: tuple[str, ...]
    passes: dict[str, Pass]
    verify_each: bool = False
    on_pass: PassHook | None = None
    reports: list[PassReport] = field(default_factory=list)

    def run(self, graph: Graph) -> Graph:
        from ..verifier import verify  # NOTE: lazy, the verifier imports the pass-free IR only
        ran: list[str] = []
        for name in self.pipeline:
            start = time.perf_counter()
            try:
                changed = self.passes[name](graph, Rewriter())
                if self.verify_each:
                    verify(graph)
            except Exception as exc:
                raise PassError(name, tuple(ran), exc) from exc
            report = PassReport(name, bool(changed), sum(1 for _ in graph.walk()),
                                time.perf_counter() - start)
            self.reports.append(report)
            if self.on_pass is not None:
                self.on_pass(report, graph)
            ran.append(name)
        return graph
