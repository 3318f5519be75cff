"""A recorded run as one self-contained HTML page: an index of the functions compiled (counts,
times, why each compile happened), the refusals with the user's line, and per specialization the
user's source, the IR stage by stage and the generated code side by side, linked line to line
(`page.py`), with the control-flow regions drawn (`diagram.py`)."""
from __future__ import annotations

import difflib
import os
import re
from html import escape
from typing import Any, Iterable

from .diagram import region_diagram
from .events import Run
from .page import SCRIPT, STYLE

_LOC_COMMENT = re.compile(r".+:\d+(:\d+)?")


def render(run: Run, title: str = "amber compile report") -> str:
    """The report page for `run`."""
    files = _short_names(run)
    body = [f"<h1>{escape(title)}</h1>", _summary(run), _index(run), _refusals(run, files)]
    for function in run.functions.values():
        for spec in function.specializations:
            body.append(_specialization(function.title, spec, files))
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>"
            + "\n".join(body) + f"<script>{SCRIPT}</script></body></html>\n")


def spec_id(title: str, index: int) -> str:
    """The HTML id of a function's `index`-th specialization."""
    safe = "".join(c if c.isalnum() else "-" for c in title)
    return f"s-{safe}-{index}"


# -- the run as a whole -------------------------------------------------------------------------

def _summary(run: Run) -> str:
    specs = run.specializations
    compiled = sum(1 for s in specs if s["origin"] == "compiled")
    disk = sum(1 for s in specs if s["origin"] == "disk")
    seconds = sum(s.get("seconds") or 0.0 for s in specs)
    commands = ", ".join(escape(" ".join(p.get("argv") or ["?"])) for p in run.processes)
    skipped = (f"; {run.skipped_lines} damaged line(s) skipped" if run.skipped_lines else "")
    return (f"<p>{len(run.processes)} process(es): <code>{commands}</code><br>"
            f"{len(run.functions)} function(s); {compiled} compile(s), {disk} served by the disk "
            f"cache, {len(run.refusals)} refusal(s); {seconds * 1e3:.1f} ms making code"
            f"{skipped}.</p>")


def _index(run: Run) -> str:
    rows = []
    for f in run.functions.values():
        link = escape(f.title)
        if f.specializations:
            link = f'<a href="#{spec_id(f.title, 0)}">{link}</a>'
        reasons = "<br>".join(
            f'<a href="#{spec_id(f.title, s["index"])}">{escape(s["key"])}</a>: '
            f'{escape(_origin_text(s))}' for s in f.specializations)
        rows.append(f"<tr><td>{link}</td><td class=num>{f.compiles}</td>"
                    f"<td class=num>{f.disk_hits}</td><td class=num>{len(f.refusals)}</td>"
                    f"<td class=num>{f.seconds * 1e3:.1f}</td><td>{reasons}</td></tr>")
    return ('<h2 id="index">Functions</h2><table class="index"><thead><tr><th>function</th>'
            "<th>compiled</th><th>from disk</th><th>refused</th><th>ms</th>"
            "<th>specializations: why each was made</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>")


def _origin_text(spec: dict[str, Any]) -> str:
    origin = {"compiled": "compiled", "disk": "read from the disk cache",
              "eager": "runs eagerly (fallback)"}.get(spec["origin"], spec["origin"])
    return f"{origin} ({spec.get('reason') or 'first call'})"


def _refusals(run: Run, files: dict[str, str]) -> str:
    if not run.refusals:
        return '<h2 id="refusals">Refusals</h2><p class="muted">None: everything compiled.</p>'
    items = []
    for r in run.refusals:
        where = f"{files.get(r['file'], r['file'])}:{r['line']}"
        outcome = "ran eagerly instead" if r.get("outcome") == "eager fallback" else "raised"
        items.append(f'<div class="refusal"><b>{escape(r["function"])}</b> at '
                     f'<code>{escape(where)}</code> ({escape(outcome)}): '
                     f'{escape(r.get("message", ""))}<pre>{escape(r.get("text", ""))}</pre></div>')
    return '<h2 id="refusals">Refusals</h2>' + "".join(items)


def _short_names(run: Run) -> dict[str, str]:
    """Source files by full path -> how the report names them: relative to the directory the
    run started in when inside it, else the last two parts of the path (`nn/basic.py`)."""
    cwd = next((p.get("cwd") for p in run.processes if p.get("cwd")), None)
    names = {}
    for spec in run.specializations:
        for src in (spec.get("trace") or {}).get("sources", ()):
            path = src.get("file") or ""
            if cwd and path.startswith(cwd.rstrip(os.sep) + os.sep):
                names[path] = os.path.relpath(path, cwd)
            else:
                names[path] = os.path.join(*path.split(os.sep)[-2:]) if os.sep in path else path
    return names


# -- one specialization -------------------------------------------------------------------------

def _specialization(title: str, spec: dict[str, Any], files: dict[str, str]) -> str:
    trace = spec.get("trace") or {}
    head = (f'<section class="spec" id="{spec_id(title, spec["index"])}" '
            f'data-function="{escape(title)}"><h2>{escape(title)} '
            f'<span class="muted">{escape(spec["key"])}</span></h2>'
            f"<p>{escape(_origin_text(spec))}; {(spec.get('seconds') or 0) * 1e3:.1f} ms"
            + (f"; {escape(_backend_text(trace['backend']))}" if trace.get("backend") else "")
            + "</p>")
    if title.startswith("grad_"):
        head += ("<p class=muted>A gradient function: the stage <i>transformed</i> adds the "
                 "backward to the forward; each backward line links to the forward line it "
                 "differentiates.</p>")
    parts = [head]
    if trace:
        parts.append('<div class="panes">' + _source_pane(trace.get("sources", ()), files)
                     + _ir_pane(trace) + _code_pane(trace.get("code")) + "</div>")
        parts.append('<div class="grid2">' + _diagram(trace, files) + _timing(trace) + "</div>")
    elif spec.get("code"):
        parts.append("<p class=muted>Read from the disk cache: the IR was not rebuilt, so only "
                     "the generated code is shown.</p>")
        parts.append('<div class="panes">' + _code_pane(spec["code"]) + "</div>")
    parts.append("</section>")
    return "".join(parts)


def _backend_text(backend: dict[str, Any]) -> str:
    kernels = backend.get("kernels") or []
    if kernels:
        return (f"backend {backend.get('option')}: {len(kernels)} loop(s) in Numba kernels "
                f"({', '.join(kernels)})")
    return f"backend {backend.get('option')}: NumPy code (no loop sent to Numba)"


def _timing(trace: dict[str, Any]) -> str:
    seconds = trace.get("seconds") or {}
    total = sum(seconds.values()) or 1.0
    bar = "".join(f'<span class="{k}" style="width:{100 * v / total:.1f}%" '
                  f'title="{k} {v * 1e3:.1f} ms"></span>' for k, v in seconds.items())
    legend = ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in seconds.items())
    rows = "".join(
        f"<tr><td>{escape(p['name'])}</td><td class=num>{p['nodes']}</td>"
        f"<td class=num>{p['ms']:.2f}</td><td>{'changed' if p['changed'] else '-'}</td></tr>"
        for p in trace.get("passes", ()))
    changed = sum(1 for p in trace.get("passes", ()) if p["changed"])
    return (f'<div><h3>Where the time went</h3><div class="bar">{bar}</div>'
            f'<p class="muted">{escape(legend)}</p><details><summary>'
            f'{len(trace.get("passes", ()))} passes run, {changed} changed the IR</summary>'
            '<table class="passes"><thead><tr><th>pass</th><th>nodes after</th><th>ms</th>'
            f"<th>IR</th></tr></thead><tbody>{rows}</tbody></table></details></div>")


def _diagram(trace: dict[str, Any], files: dict[str, str]) -> str:
    if not trace.get("regions"):
        return ""
    return ("<div><h3>Control flow (optimized IR)</h3>"
            + region_diagram(trace["regions"], files) + "</div>")


def _source_pane(sources: Iterable[dict[str, Any]], files: dict[str, str]) -> str:
    blocks = []
    for src in sources:
        name = files.get(src["file"], src["file"])
        lines = [f'<div class="srcfile">{escape(src.get("title", ""))} — '
                 f'{escape(name)}</div>']
        for i, text in enumerate(src["text"].splitlines()):
            number = src["first_line"] + i
            lines.append(f'<div class="ln" data-key="{escape(src["file"])}:{number}">'
                         f'<span class="no">{number}</span>{escape(text)}</div>')
        blocks.append("".join(lines))
    return _pane("source", "Your code", "".join(blocks))


def _ir_pane(trace: dict[str, Any]) -> str:
    stages = [("ir", "as built", trace.get("ir"))]
    if trace.get("transformed"):
        stages.append(("transformed", "transformed (backward added)", trace["transformed"]))
    for p in trace.get("passes", ()):
        stages.append((f"pass-{len(stages)}", f"after {p['name']}"
                       + ("" if p["changed"] else " (unchanged)"), p.get("ir")))
    options, bodies, previous = [], [], None
    last = len(stages) - 1
    for i, (key, label, ir) in enumerate(stages):
        shown = ir if ir is not None else previous
        options.append(f'<option value="{key}"{" selected" if i == last else ""}>'
                       f"{escape(label)}</option>")
        added = _added_lines(previous, shown) if ir is not None and previous else set()
        bodies.append(f'<div class="stage{" shown" if i == last else ""}" data-stage="{key}">'
                      + _lines(shown, added, first=0) + "</div>")
        previous = shown
    title = f'IR <select class="stages" aria-label="IR stage">{"".join(options)}</select>'
    return _pane("ir", title, "".join(bodies), escape_title=False)


def _code_pane(code: dict[str, Any] | None) -> str:
    return _pane("code", "Generated code", _lines(code, set(), first=1) if code else "")


def _pane(kind: str, title: str, body: str, escape_title: bool = True) -> str:
    shown = escape(title) if escape_title else title
    return (f'<div class="pane" data-pane="{kind}"><div class="title">{shown}</div>'
            f'<div class="lines">{body}</div></div>')


def _lines(text: dict[str, Any] | None, added: set[int], first: int) -> str:
    """Numbered lines, each carrying the chain of source lines it came from."""
    if not text:
        return ""
    locs = text.get("locs", {})
    out = []
    for i, line in enumerate(text["text"].splitlines()):
        number = i + first
        chain = " ".join(f"{f}:{n}" for f, n in locs.get(str(number), ()))
        attr = f' data-chain="{escape(chain)}"' if chain else ""
        cls = "ln added" if i in added else "ln"
        out.append(f'<div class="{cls}"{attr}><span class="no">{number}</span>'
                   f"{escape(_without_loc(line))}</div>")
    return "".join(out)


def _without_loc(line: str) -> str:
    """An IR line without its trailing `# file:line:col` comment (the link carries it)."""
    code, sep, comment = line.rpartition("  # ")
    return code.rstrip() if sep and _LOC_COMMENT.fullmatch(comment.strip()) else line


def _added_lines(before: dict[str, Any] | None, after: dict[str, Any] | None) -> set[int]:
    """Lines of `after` that a pass added or changed relative to `before`."""
    if not before or not after:
        return set()
    old = [_without_loc(line) for line in before["text"].splitlines()]
    new = [_without_loc(line) for line in after["text"].splitlines()]
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return {j for tag, _, _, j1, j2 in matcher.get_opcodes() if tag in ("replace", "insert")
            for j in range(j1, j2)}
