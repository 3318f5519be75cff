"""Recording a run for the compile report (`amber report`): every compile of the process, with
why it happened, the IR after each pass, the generated code and the links between them; disk
cache hits; refusals; eager fallbacks; axes made symbolic.

Started by `AMBER_REPORT=<dir>` (read once, when amber is imported: `runtime/__init__.py`) or `amber.report.start(dir)`,
it appends JSON lines to `<dir>/run-<pid>-<ms>.jsonl`, one file per process, so processes of one
run (data-parallel ranks, a test session's workers) never interleave a line. Nothing is recorded
on the call path, only where amber compiles or reads its disk cache: calls served by compiled
code cost what they cost without the recorder.
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

FORMAT = 1
"""Version of the event format; `amber report` refuses files of another one."""

class Recorder:
    """Appends events to one file, each a JSON object on its own line (`kind`, `t` in seconds
    since the recorder started, then the event's fields)."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / f"run-{os.getpid()}-{int(time.time() * 1000)}.jsonl"
        self._start = time.perf_counter()
        self._lock = threading.Lock()
        self.emit("run", format=FORMAT, argv=list(sys.argv), pid=os.getpid(),
                  started=time.time(), cwd=os.getcwd())

    def emit(self, kind: str, **fields: Any) -> None:
        record = {"kind": kind, "t": round(time.perf_counter() - self._start, 6), **fields}
        line = json.dumps(record, default=str)
        with self._lock, open(self.path, "a", encoding="utf-8") as out:
            out.write(line + "\n")


_active: Recorder | None = None


def active() -> Recorder | None:
    """The recorder of this process, or None when nothing is being recorded."""
    return _active


def start(directory: str | Path) -> Path:
    """Record every compile from now on into `directory`; returns the file written. A recorder
    already running is stopped first."""
    global _active
    _active = Recorder(directory)
    return _active.path


def stop() -> Path | None:
    """Stop recording; returns the file written (None if nothing was being recorded)."""
    global _active
    recorder, _active = _active, None
    return None if recorder is None else recorder.path


# -- what a compile looked like, as plain data --------------------------------------------------

def loc_chain(loc: Any) -> list[list[Any]]:
    """`[[file, line], ...]` from a location outwards through the calls it was inlined from."""
    return [] if loc is None else [[l.file, l.line] for l in loc.chain()]


def describe_sources(sources: Iterable[Any], titles: Iterable[str]) -> list[dict[str, Any]]:
    """Each function compiled or inlined: its title, file, first line and text."""
    titles = list(titles)
    return [{"title": titles[i] if i < len(titles) else "",
             "file": getattr(text, "file", ""), "first_line": getattr(text, "first_line", 1),
             "text": str(text)} for i, text in enumerate(sources)]


def describe_graph(graph: Any) -> dict[str, Any]:
    """The graph's text and, per printed line (0-based), the source chain of the node on it."""
    from ..graph import print_graph_lines
    text, nodes = print_graph_lines(graph)
    return {"text": text,
            "locs": {str(line): loc_chain(node.loc) for line, node in nodes.items() if node.loc}}


def describe_code(source: str, line_map: Mapping[int, Any]) -> dict[str, Any]:
    """Generated source and, per line (1-based), the source chain it came from."""
    return {"text": source, "locs": {str(line): loc_chain(loc) for line, loc in line_map.items()}}


def describe_regions(graph: Any) -> dict[str, Any]:
    """The graph's control-flow structure: nested If/While/For regions, with the number of plain
    operations in each block, for the report's diagram."""
    def block(role: str, blk: Any) -> dict[str, Any]:
        regions = [region(node) for node in blk.nodes if node.is_region]
        return {"role": role, "ops": sum(1 for node in blk.nodes if not node.is_region),
                "regions": regions}

    def region(node: Any) -> dict[str, Any]:
        from ..graph.printer import ROLES
        roles = ROLES.get(node.op, ())
        loc = node.loc
        return {"kind": str(node.name), "loc": loc_chain(loc),
                "text": (loc.text or "").strip() if loc is not None else "",
                "blocks": [block(roles[i] if i < len(roles) else "block", b)
                           for i, b in enumerate(node.blocks)]}

    return block("body", graph.body)


class CompileTrace:
    """Collects one compile's stages while the pipeline runs (see `pipeline.compile_target`)."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {"passes": []}

    def source(self, sources: Iterable[Any], titles: Iterable[str]) -> None:
        self.data["sources"] = describe_sources(sources, titles)

    def graph(self, stage: str, graph: Any) -> None:
        self.data[stage] = describe_graph(graph)

    def on_pass(self, report: Any, graph: Any) -> None:
        """One pass's name, node count and time, and the IR after it when it changed the graph
        (the report shows an unchanged pass as the IR before it)."""
        self.data["passes"].append({
            "name": report.name, "nodes": report.nodes, "ms": round(report.seconds * 1e3, 3),
            "changed": report.changed, "ir": describe_graph(graph) if report.changed else None})

    def finish(self, graph: Any, code: Any, seconds: Mapping[str, float], backend: str) -> None:
        self.data["regions"] = describe_regions(graph)
        self.data["code"] = describe_code(code.source, code.line_map)
        self.data["seconds"] = {k: round(v, 6) for k, v in seconds.items()}
        kernels = [k.name for k in getattr(code, "kernels", ())]
        self.data["backend"] = {"option": backend, "kernels": kernels}
