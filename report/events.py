"""Reading a recorded run (the JSON-lines files `runtime/recorder.py` writes) into what the report
shows: the processes, the functions compiled, each specialization and each refusal."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..runtime.recorder import FORMAT


class ReportError(Exception):
    """The directory holds no recorded run amber can read."""


@dataclass
class Function:
    """One function (a jit target, or a gradient function) and what happened to it."""
    title: str
    specializations: list[dict[str, Any]] = field(default_factory=list)
    refusals: list[dict[str, Any]] = field(default_factory=list)

    @property
    def compiles(self) -> int:
        return sum(1 for s in self.specializations if s["origin"] == "compiled")

    @property
    def disk_hits(self) -> int:
        return sum(1 for s in self.specializations if s["origin"] == "disk")

    @property
    def eager(self) -> int:
        return sum(1 for s in self.specializations if s["origin"] == "eager")

    @property
    def seconds(self) -> float:
        return sum(s.get("seconds") or 0.0 for s in self.specializations)


@dataclass
class Run:
    """Everything recorded in one directory, possibly by several processes."""
    processes: list[dict[str, Any]]
    functions: dict[str, Function]
    skipped_lines: int = 0

    @property
    def specializations(self) -> list[dict[str, Any]]:
        return [s for f in self.functions.values() for s in f.specializations]

    @property
    def refusals(self) -> list[dict[str, Any]]:
        return [r for f in self.functions.values() for r in f.refusals]


def load_run(directory: str | Path) -> Run:
    """Read every `run-*.jsonl` file of `directory`; a line that is not a whole JSON event (a
    process killed mid-write) is counted and skipped."""
    directory = Path(directory)
    if not directory.is_dir():
        raise ReportError(f"{directory} is not a directory (record a run with "
                          f"AMBER_REPORT={directory} python your_script.py)")
    files = sorted(directory.glob("run-*.jsonl"))
    if not files:
        raise ReportError(f"{directory} holds no recorded run (run-*.jsonl); record one with "
                          f"AMBER_REPORT={directory} python your_script.py")
    processes: list[dict[str, Any]] = []
    functions: dict[str, Function] = {}
    skipped = 0
    for path in files:
        for event in _events(path):
            if event is None:
                skipped += 1
                continue
            kind = event.get("kind")
            if kind == "run":
                if event.get("format") != FORMAT:
                    raise ReportError(f"{path} was recorded in format {event.get('format')!r}; "
                                      f"this amber reads format {FORMAT}")
                processes.append({**event, "file": path.name})
                continue
            title = str(event.get("function", "?"))
            function = functions.setdefault(title, Function(title))
            event["process"] = len(processes) - 1
            if kind == "specialization":
                event["index"] = len(function.specializations)
                function.specializations.append(event)
            elif kind == "refusal":
                function.refusals.append(event)
    return Run(processes, functions, skipped)


def _events(path: Path):
    with open(path, encoding="utf-8", errors="replace") as lines:
        for line in lines:
            if not line.strip():
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                yield None
                continue
            yield event if isinstance(event, dict) else None
