"""Assembles the generated module: docstring, `import numpy as np`, module constants, the copied
helpers, then the entry function; prints it (pyast.to_source), turns location markers into
`# file.py:12: <source>` comments and maps generated lines back to user locations.
"""
from __future__ import annotations

import ast
import linecache
import os
import re
from dataclasses import dataclass, field
from typing import Any

from ..graph import Graph, Loc, Node
from . import pyast as py
from ..graph.sizes import size_sources
from .emitter import EntrySize, Emitter, return_loc
from .buffers import (PARAMETER as BUFFERS, buffer_order, buffers_class, reused_temporaries,
                      reuses_buffers)
from .frees import plan_frees
from .hazards import find_hazards
from .helpers import collect_helpers, helper_source
from ..version import __version__
from .literal import ConstantPool
from .lowering import Lowered, lower
from .namer import Namer
from .native import HELPER_DECORATOR, Kernel, build_kernel, loop_regions, \
    select_regions
from .native.types import region_kind
from ..ops import native_kernels as _native_ops
from ..ops.opdef import OpDef
from ..ops.parallel import HELPERS as _PARALLEL_HELPERS, one_blas_thread

NATIVE_HELPERS = tuple(v for v in vars(_native_ops).values()
                       if callable(v) and getattr(v, "__module__", "") == _native_ops.__name__)
"""Every function the ops' Numba spellings may call: no kernel variable takes their names."""
from .prelude import PRELUDE
from .storage import Kind, Storage



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
    kernels: tuple[KernelInfo, ...] = ()
    """The Numba kernels the module defines (the module imports numba when there are any)."""


@dataclass(frozen=True)
class KernelInfo:
    """Where one Numba kernel is: its name, the id of the loop region it computes (an index of
    `native.loop_regions`), the module lines from its decorator to its `def`, and the loop."""
    name: str
    region: int
    first_line: int
    def_line: int
    loc: Loc | None


def generate(graph: Graph, *, title: str = "", signature: str = "",
             version: str | None = None, backend: str = "numpy",
             exclude: frozenset[int] = frozenset(), threads: int = 1) -> GeneratedCode:
    """Lower `graph` to a standalone, readable Python module (its docstring names amber
    `version`, by default the installed distribution's). With `backend` "numba" or "auto",
    loop regions (see `native.select_regions`; not those whose ids are in `exclude`) become
    Numba kernels the module defines and calls. With "onnxruntime", the module runs the
    graph's ONNX model in an onnxruntime session (codegen/onnx/module.py). `threads`: the
    compile's `num_threads`; above 1, a function with convolutions amber threads holds BLAS at
    one thread (`@one_blas_thread`), also where none of them splits (`place_threads`)."""
    if backend == "onnxruntime":
        from .onnx.module import generate_onnxruntime
        return generate_onnxruntime(graph, title, signature, version or __version__)
    namer = Namer()
    buffered = reused_temporaries(graph)
    lowered = lower(graph, frozenset(buffered))
    regions = select_regions(graph, backend, exclude)
    threaded = any(node.attrs.get("threads", 1) > 1 or threads > 1 and
                   isinstance(node.op, OpDef) and "threads" in node.op.attrs
                   for node in graph.walk())
    helpers = collect_helpers([*(h for low in lowered.values() for h in low.helpers),
                               *((*_PARALLEL_HELPERS, one_blas_thread) if threaded else ()),
                               *((reuses_buffers,) if buffered else ())])
    for fn in [*helpers, *PRELUDE]:
        namer.reserve(fn.__name__)
    if buffered:
        namer.reserve(BUFFERS)
    fn_name = namer.fresh(graph.name or "forward")
    buffers_name = namer.fresh("Buffers") if buffered else ""
    kernel_names = {r: namer.fresh(f"{fn_name}_{region_kind(r)}") for r in regions}
    hidden = frozenset(v for r in regions for v in _inner_values(r))
    storage = _allocate(graph, lowered, namer, hidden)
    pool = ConstantPool(namer)
    emitter = Emitter(storage, pool, plan_frees(graph, storage), _MARKER.format,
                      _entry_sizes(graph, lowered, namer))
    kernels = _kernels(kernel_names, namer, emitter, storage, helpers)
    emitter.kernels = {k.region: k for k in kernels}
    emitter.buffers = _buffer_names(buffered, storage)
    main = emitter.function(graph, fn_name)
    if threaded:  # NOTE: no GEMM on BLAS's threads between the threaded kernels
        main.decorator_list.append(py.name(one_blas_thread.__name__))
    if buffered:
        main.args.args.append(ast.arg(arg=BUFFERS))
        main.decorator_list.append(py.call(reuses_buffers.__name__, [py.name(buffers_name)]))
    function = py.to_source(py.module([k.function for k in kernels] + [main]))
    helpers += [fn for fn in PRELUDE if fn in emitter.helpers]
    native_helpers = collect_helpers(h for k in kernels for h in k.helpers)
    header = _header(graph, title, signature, version or __version__, pool, len(kernels))
    chunks = [header, *(helper_source(fn) for fn in helpers),
              *("@" + HELPER_DECORATOR + "\n" + helper_source(fn) for fn in native_helpers)]
    if buffered:
        chunks.append(buffers_class(buffers_name, [(emitter.buffers[n], n.output.type,
                                                    buffer_order(n)) for n in buffered]))
    prefix = "".join(chunk.rstrip("\n") + "\n\n\n" for chunk in chunks)
    body, line_map = _place_comments(function, emitter.markers, prefix.count("\n") + 1)
    source = prefix + body
    ids = {node: k for k, node in enumerate(loop_regions(graph))}
    return GeneratedCode(source, fn_name, tuple(storage.name(v) for v in graph.inputs),
                         line_map, pool.externals(),
                         tuple(_kernel_info(source, k, ids[k.region]) for k in kernels))


def _buffer_names(buffered: list[Node], storage: Storage) -> dict[Node, str]:
    """Each kept buffer's attribute: its value's variable, or for an expression inlined into
    its reader, the op's name (`buffers.multiply`: no variable of that name to confuse)."""
    names = Namer()
    found = {}
    for node in buffered:
        value = node.output
        name = storage.name(value) if storage.kind[value] is Kind.VAR else node.op.name
        found[node] = names.fresh(name)
    return found


def _inner_values(region: Node) -> list:
    """The values computed inside a region (its blocks' parameters and nodes' results)."""
    values = [p for b in region.blocks for p in b.params]
    for node in (n for b in region.blocks for n in b.walk()):
        values += node.outputs
        values += [p for b in node.blocks for p in b.params]
    return values


def _kernels(names: dict[Node, str], namer: Namer, emitter: Emitter, storage: Storage,
             helpers: list) -> list[Kernel]:
    """Build each kernel; its local names stay clear of the module-level names it could read
    (functions, `np`, `numba`)."""
    module_level = {fn.__name__ for fn in [*helpers, *PRELUDE, *NATIVE_HELPERS]}
    module_level |= set(names.values()) | {"numba"}
    kernels = []
    for region, name in names.items():
        local = Namer()
        for taken in sorted(module_level - local.taken):
            local.reserve(taken)

        def outer_name(value: Any) -> str:
            try:
                return storage.name(value)
            except KeyError:  # NOTE: a value inlined into its reader has no variable
                return value.name or "v"
        kernels.append(build_kernel(region, name, local, emitter.marker, outer_name))
    clash = {fn.__name__ for fn in helpers} & {h.__name__ for k in kernels for h in k.helpers}
    assert not clash, f"codegen: {sorted(clash)} are both NumPy and Numba helpers"
    return kernels


def _kernel_info(source: str, kernel: Kernel, region: int) -> KernelInfo:
    lines = source.splitlines()
    def_line = next(i for i, line in enumerate(lines, 1)
                    if line.startswith(f"def {kernel.name}("))
    first = def_line
    while first > 1 and lines[first - 2].startswith("@"):
        first -= 1
    return KernelInfo(kernel.name, region, first, def_line, kernel.region.loc)


def _entry_sizes(graph: Graph, lowered: dict[Node, Lowered], namer: Namer) -> list[EntrySize]:
    """The symbolic sizes the code reads, each named after its symbol (`n` for N) and read
    from the first input holding it as a whole dim."""
    used = set().union(*(low.form.sizes for low in lowered.values()))
    sources = size_sources([v.type for v in graph.inputs])
    missing = used - set(sources)
    assert not missing, f"codegen: no input of @{graph.name} holds the size(s) {sorted(missing)}"
    return [EntrySize(s.symbol, namer.fresh(s.symbol.lower()), s.input, s.axis)
            for s in sources.values() if s.symbol in used]


def _allocate(graph: Graph, lowered: dict[Node, Lowered], namer: Namer,
              hidden: frozenset = frozenset()) -> Storage:
    """Decide every value's storage, dropping variable merges until no read is wrong."""
    storage = Storage(graph, lowered, return_loc(graph))
    while hazards := find_hazards(graph, storage):
        storage.resolve([(h.reader, h.writers) for h in hazards])
    storage.assign_names(namer, hidden)
    return storage


def _header(graph: Graph, title: str, signature: str, version: str, pool: ConstantPool,
            kernels: int = 0) -> str:
    """The docstring, `import numpy as np` (and `import numba`) and the module constants."""
    doc = py.expr_stmt(py.const(_docstring(graph, title, signature, version, kernels)))
    imports = [py.import_numpy()]
    if kernels:
        imports.append(ast.Import(names=[ast.alias(name="numba", asname=None)]))
    header = py.to_source(py.module([doc, *imports]))
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


def _docstring(graph: Graph, title: str, signature: str, version: str, kernels: int = 0) -> str:
    lines = [f"{title or graph.name}: generated by amber {version}."]
    if signature:
        lines += ["", f"Input signature: {signature}"]
    if kernels:
        loops = "loop runs" if kernels == 1 else f"{kernels} loops run"
        lines += ["", f"Standalone: needs NumPy and Numba (the {loops} as a Numba kernel, "
                  "compiled when the", "module loads and cached beside it). Edits are lost "
                  "when amber recompiles.", ""]
    else:
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
