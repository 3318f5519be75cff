"""Assembles the generated module: docstring, `import numpy as np`, module constants, the copied
helpers, then the entry function; prints it (pyast.to_source), turns location markers into
`# file.py:12: <source>` comments and maps generated lines back to user locations.
"""
from __future__ import annotations

import linecache
import os
import re
from dataclasses import dataclass, field
from typing import Any

from ..graph import Graph, Loc, Node
from . import pyast as py
from ..graph.sizes import size_sources
from .emitter import EntrySize, Emitter, return_loc
from .frees import plan_frees
from .hazards import find_hazards
from .helpers import collect_helpers, helper_source
from ..version import __version__
from .literal import ConstantPool
from .lowering import Lowered, lower
from .namer import Namer
from .prelude import PRELUDE
from .storage import Storage



_MARKER = "@@amber-loc-{}@@"
_COMMENT_TEXT = 72
_MARKER_LINE = re.compile(r"^(\s*)(?P<q>'''|\"\"\"|'|\")@@amber-loc-(\d+)@@(?P=q)\s*$")


@dataclass(frozen=True)
class GeneratedCode:
    """A generated module and what the runtime needs to call it and map errors back."""
    source: str
    """The whole module text; it imports only numpy (`import numpy as np`)."""
    function_name: str
    """The entry function defined in `source`."""
    arg_names: tuple[str, ...]
    """The entry function's parameters, in `graph.inputs` order."""
    line_map: dict[int, Loc]
    """Generated line number (1-based) -> the user location that statement comes from."""
    externals: dict[str, Any] = field(default_factory=dict)
    """Objects the module names but its text cannot define (user exception classes): it
    defines a stand-in for each, which a loader replaces, `namespace.update(externals)` after
    executing the module and before calling the function."""


def generate(graph: Graph, *, title: str = "", signature: str = "",
             version: str | None = None) -> GeneratedCode:
    """Lower `graph` to a standalone, readable Python module (its docstring names amber
    `version`, by default the installed distribution's)."""
    namer = Namer()
    lowered = lower(graph)
    helpers = collect_helpers(h for low in lowered.values() for h in low.helpers)
    for fn in [*helpers, *PRELUDE]:
        namer.reserve(fn.__name__)
    fn_name = namer.fresh(graph.name or "forward")
    storage = _allocate(graph, lowered, namer)
    pool = ConstantPool(namer)
    emitter = Emitter(storage, pool, plan_frees(graph, storage), _MARKER.format,
                      _entry_sizes(graph, lowered, namer))
    function = py.to_source(py.module([emitter.function(graph, fn_name)]))
    helpers += [fn for fn in PRELUDE if fn in emitter.helpers]
    header = _header(graph, title, signature, version or __version__, pool)
    chunks = [header, *(helper_source(fn) for fn in helpers)]
    prefix = "".join(chunk.rstrip("\n") + "\n\n\n" for chunk in chunks)
    body, line_map = _place_comments(function, emitter.markers, prefix.count("\n") + 1)
    return GeneratedCode(prefix + body, fn_name, tuple(storage.name(v) for v in graph.inputs),
                         line_map, pool.externals())


def _entry_sizes(graph: Graph, lowered: dict[Node, Lowered], namer: Namer) -> list[EntrySize]:
    """The symbolic sizes the code reads, each named after its symbol (`n` for N) and read
    from the first input holding it as a whole dim."""
    used = set().union(*(low.form.sizes for low in lowered.values()))
    sources = size_sources([v.type for v in graph.inputs])
    missing = used - set(sources)
    assert not missing, f"codegen: no input of @{graph.name} holds the size(s) {sorted(missing)}"
    return [EntrySize(s.symbol, namer.fresh(s.symbol.lower()), s.input, s.axis)
            for s in sources.values() if s.symbol in used]


def _allocate(graph: Graph, lowered: dict[Node, Lowered], namer: Namer) -> Storage:
    """Decide every value's storage, dropping variable merges until no read is wrong."""
    storage = Storage(graph, lowered, return_loc(graph))
    while hazards := find_hazards(graph, storage):
        storage.resolve([(h.reader, h.writers) for h in hazards])
    storage.assign_names(namer)
    return storage


def _header(graph: Graph, title: str, signature: str, version: str, pool: ConstantPool) -> str:
    """The docstring, `import numpy as np` and the module constants."""
    doc = py.expr_stmt(py.const(_docstring(graph, title, signature, version)))
    header = py.to_source(py.module([doc, py.import_numpy()]))
    constants = pool.definitions()
    return header + ("\n\n" + py.to_source(py.module(constants)) if constants else "")


def _place_comments(function: str, markers: list[Loc], first: int) -> tuple[str, dict[int, Loc]]:
    """Replace the marker lines of the printed function (starting at line `first` of the
    module) by location comments; return the text and its line map."""
    lines = function.splitlines()
    line_map = {}
    for i, line in enumerate(lines):
        match = _MARKER_LINE.match(line)
        if match:
            loc = markers[int(match[3])]
            lines[i] = match[1] + _comment(loc)
            line_map[first + i] = loc
    _extend_to_statements(line_map, lines, first)
    return "\n".join(lines) + "\n", line_map


def _docstring(graph: Graph, title: str, signature: str, version: str) -> str:
    lines = [f"{title or graph.name}: generated by amber {version}."]
    if signature:
        lines += ["", f"Input signature: {signature}"]
    lines += ["", "Standalone: needs only NumPy. Edits are lost when amber recompiles.", ""]
    return "\n".join(lines)


def _comment(loc: Loc) -> str:
    """`# net.py:12: x = relu(x)`, the source read from the file when the Loc lacks it; a line
    of one of amber's layers is shown as the user's line calling it."""
    loc = loc.user
    text = (loc.text or linecache.getline(loc.file, loc.line)).strip().splitlines()
    comment = f"# {os.path.basename(loc.file)}:{loc.line}"
    if text:
        shown = text[0] if len(text[0]) <= _COMMENT_TEXT else text[0][:_COMMENT_TEXT - 3] + "..."
        comment += f": {shown}"
    return comment


def _extend_to_statements(line_map: dict[int, Loc], lines: list[str], first: int) -> None:
    """Map each line of the function to the comment governing it: the last one above it at the
    same or a shallower indentation, within the blocks enclosing the line."""
    stack: list[tuple[int, Loc]] = []
    for i, line in enumerate(lines[1:], 1):
        stripped = line.lstrip()
        if not stripped:
            continue
        indent = len(line) - len(stripped)
        while stack and (stack[-1][0] > indent or first + i in line_map
                         and stack[-1][0] == indent):
            stack.pop()
        if first + i in line_map:
            stack.append((indent, line_map[first + i]))
        elif stack:
            line_map[first + i] = stack[-1][1]
