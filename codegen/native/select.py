"""Which loop regions become Numba kernels.

A region qualifies when a kernel can compute all of it (`kernel.build_kernel` succeeds: every
value a numeric array of static shape or a number, every op with a `numba` spelling) and, at its
boundary, NumPy code would hold each rank-0 result as a NumPy scalar (a kernel returns scalars).
The outermost qualifying loops are taken; inside a loop that does not qualify, its inner loops
are tried.

`backend="numba"` takes every qualifying region. `backend="auto"` also asks the cost rule
(`worth_compiling`), from what the benchmarks (benchmarks/native.py) show: a kernel wins where
NumPy's per-call overhead (about a microsecond per op, per iteration) dominates, that is on
small arrays; on large arrays NumPy's vectorized loops and a kernel's element loops cost about
the same per element, except transcendental functions (tanh, exp, ...), which NumPy computes
several times faster, and a kernel costs a compile (under a second, then cached on disk).
"""
from __future__ import annotations

import ast
from typing import Iterator

from ...graph import FOR, WHILE, Graph, Node, Value
from ...ops import python as pyops
from ..namer import Namer
from ..storage import maybe_unbound
from .kernel import build_kernel
from .types import NotNative, elements, is_array, may_be_0d_array

BACKENDS = ("numpy", "numba", "auto")

AUTO_MAX_ELEMENTS = 4096
"""Auto: no array a kernel would compute may have more elements than this (above it, per-element
work outweighs the calls a kernel saves)."""

AUTO_MAX_TRANSCENDENTAL = 1024
"""Auto: nor may an array computed by a transcendental function (NumPy's SIMD versions are
several times faster than the C library's the kernel calls)."""

AUTO_MIN_ITERATIONS = 8
"""Auto: a For loop of fewer iterations than this (known when compiling) stays NumPy: there is
little per-call overhead to save for the compile it costs."""

TRANSCENDENTAL = frozenset({"exp", "log", "tanh", "sigmoid", "gelu", "sin", "cos", "pow"})


def loop_regions(graph: Graph) -> list[Node]:
    """Every loop region of the graph, in program order (a kernel's id is its index here)."""
    return [n for n in graph.walk() if n.op in (WHILE, FOR)]


def select_regions(graph: Graph, backend: str, exclude: frozenset[int] = frozenset()
                   ) -> list[Node]:
    """The loop regions to compile as kernels for `backend` ("numpy": none), outermost first;
    `exclude` holds ids (see `loop_regions`) of regions that must stay NumPy."""
    assert backend in BACKENDS, f"unknown backend {backend!r}"
    if backend == "numpy":
        return []
    ids = {node: k for k, node in enumerate(loop_regions(graph))}
    unbound = frozenset(maybe_unbound(graph))
    chosen: list[Node] = []

    def visit(nodes: list[Node]) -> None:
        for node in nodes:
            if node.op in (WHILE, FOR) and ids[node] not in exclude \
                    and why_not(node, unbound) is None \
                    and (backend == "numba" or worth_compiling(node)):
                chosen.append(node)
                continue
            for block in node.blocks:
                visit(block.nodes)

    visit(graph.body.nodes)
    return chosen


def why_not(region: Node, unbound: frozenset[Value] = frozenset()) -> str | None:
    """Why no kernel can compute `region`, or None if one can; `unbound` holds the graph's
    values that may hold no binding (`storage.maybe_unbound`)."""
    for out in region.outputs:
        if out.uses and may_be_0d_array(out):
            return (f"%{out.name} is rank 0 and may be a 0-d array, which a kernel would return as"
                    " a scalar")
    try:
        kernel = build_kernel(region, "kernel", Namer(), lambda loc: ast.Pass(),
                              lambda v: v.name or "v")
    except NotNative as err:
        return str(err)
    for value in kernel.params:
        if value in unbound or value.producer is not None \
                and value.producer.op is pyops.undefined:
            return f"%{value.name} may be unbound when the loop starts"
    return None


def worth_compiling(region: Node) -> bool:
    """The auto backend's cost rule (see the module docstring and the AUTO_ constants)."""
    trips = _trip_count(region)
    if trips is not None and trips < AUTO_MIN_ITERATIONS:
        return False
    for node in _ops(region):
        for out in node.outputs:
            if not is_array(out.type):
                continue
            size = elements(out.type)
            if size > AUTO_MAX_ELEMENTS:
                return False
            if node.op.name in TRANSCENDENTAL and size > AUTO_MAX_TRANSCENDENTAL:
                return False
    return True


def _ops(region: Node) -> Iterator[Node]:
    return (n for b in region.blocks for n in b.walk() if not n.is_region)


def _trip_count(region: Node) -> int | None:
    """The iterations of a For over constant bounds, else None (unknown)."""
    if region.op != FOR:
        return None
    bounds = []
    for value in region.bounds:
        node = value.producer
        if node is None or node.op is not pyops.constant or type(node.attrs["value"]) is not int:
            return None
        bounds.append(node.attrs["value"])
    start, stop, step = bounds
    return len(range(start, stop, step)) if step else None
