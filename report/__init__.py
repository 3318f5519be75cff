"""The compile report: record a run, then turn it into one self-contained HTML page.

    AMBER_REPORT=runs/today python train.py      # or amber.report.start("runs/today")
    amber report runs/today -o report.html --open

`start(directory)`/`stop()` record every compile of this process (see `runtime/recorder.py`);
`write_report(directory, output)` renders what one or more processes recorded there.
"""
from __future__ import annotations

from pathlib import Path

from ..runtime.recorder import active, start, stop
from .events import ReportError, Run, load_run
from .html import render

__all__ = ["start", "stop", "active", "load_run", "render", "write_report", "ReportError", "Run"]


def write_report(directory: str | Path, output: str | Path) -> Run:
    """Render the run recorded in `directory` as the HTML file `output`; returns the run."""
    run = load_run(directory)
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(render(run, title=f"amber compile report: {Path(directory).name}"),
                      encoding="utf-8")
    return run
