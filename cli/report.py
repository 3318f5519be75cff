"""`amber report DIR -o report.html [--open]`: the run recorded in DIR (by `AMBER_REPORT=DIR` or
`amber.report.start(DIR)`) as one self-contained HTML page."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .errors import ToolError


def register(sub: Any) -> argparse.ArgumentParser:
    """Add the `report` subcommand."""
    parser = sub.add_parser("report", help="turn a recorded run (AMBER_REPORT=DIR) into an HTML "
                            "compile report")
    parser.add_argument("directory", help="the directory the run was recorded into")
    parser.add_argument("-o", "--output", default="report.html",
                        help="the HTML file to write (default: report.html)")
    parser.add_argument("--open", action="store_true",
                        help="open the report in the default web browser")
    parser.set_defaults(handler=run)
    return parser


def run(ns: argparse.Namespace) -> int:
    from ..report import ReportError, write_report
    try:
        recorded = write_report(ns.directory, ns.output)
    except ReportError as err:
        raise ToolError(str(err)) from None
    print(f"wrote {ns.output}: {len(recorded.functions)} function(s), "
          f"{len(recorded.specializations)} specialization(s), {len(recorded.refusals)} "
          "refusal(s)")
    if ns.open:
        import webbrowser
        webbrowser.open(Path(ns.output).resolve().as_uri())
    return 0
