"""Which loop regions become Numba kernels.

A region qualifies when a kernel can compute all of it (`kernel.build_kernel` succeeds: every
value a numeric array of static shape or a number, every op with a `numba` spelling) and, at its
boundary, NumPy code would hold each rank-0 result as a NumPy scalar (a kernel returns scalars).
The outermost qualifying loops are taken; inside a loop that does not qualify, its inner loops
are tried.

`backend="numba"` takes every qualifying region. `backend="auto"` also asks the cost rule
(`worth_compiling`), an estimate per iteration from what the benchmarks (benchmarks/native.py)
show: the NumPy backend pays about a microsecond of interpreter and dispatch per op, which a
kernel saves; a kernel pays more per element than NumPy only for transcendental functions,
which it calls from the C library one element at a time while NumPy has SIMD versions (exp
about 1.5 ns an element more), and float32 tanh, a rational function LLVM vectorizes where the
loop reads only arrays of known layout (1.5 ns more) and not where it reads a carried array
whose layout the kernel does not know (6 ns more); a region is compiled when the saving
outweighs that extra. Arrays above AUTO_MAX_ELEMENTS keep the region NumPy: there NumPy's calls
are cheap beside the work. That holds for the arrays the region computes and for the operands of its products,
except an operand made outside the region (a weight) in a region writing no array in place: the
kernel reads it through a contiguous copy made once a call (`kernel.contiguous_copy`), where a
product of a carried array of unknown layout copies it on every call (measured: the RNN grid at
hidden 256, batch 16, a 256x256 weight, 0.77x the NumPy backend; `x = max(x @ w, 0)` carrying a
16x512 x, 1.38x).
"""
from __future__ import annotations

import ast
from typing import Iterator

from ...graph import FOR, TRY, WHILE, Graph, Node, Value
from ...graph.analysis import defined_inside
from ...ops import python as pyops
from ..namer import Namer
from ..storage import maybe_unbound
from .kernel import build_kernel
from .types import NotNative, elements, is_array, may_be_0d_array

BACKENDS = ("numpy", "numba", "auto")

AUTO_MAX_ELEMENTS = 4096
"""Auto: no array a kernel would compute, nor an operand of a product, may have more elements
than this."""

PRODUCTS = frozenset({"matmul", "dot", "dense"})

NUMPY_CALL_NS = 1000
"""Auto: what the NumPy backend pays per op and iteration beyond the work itself (interpreter,
dispatch, a fresh result array), which a kernel saves."""

KERNEL_EXTRA_NS = {"tanh": 1.5, "gelu": 11.0, "log": 3.5, "pow": 3.0, "exp": 1.5,
                   "sigmoid": 1.5, "sin": 1.5, "cos": 1.5}
"""Auto: how many more nanoseconds per element a kernel takes than NumPy for these ops (float32,
measured on 1024 elements; other ops cost a kernel no more than NumPy per element). tanh is
`ops.native_kernels.tanh_f32` in a vectorized loop (the C library's took 11 more; gelu still
calls it)."""

SCALAR_LOOP_EXTRA_NS = {"tanh": 6.0}
"""Auto: the same where the element loop reads a carried array (see `_reads_carried`): of
unknown layout, it keeps LLVM from vectorizing the loop."""

AUTO_MIN_ITERATIONS = 8
"""Auto: a For loop of fewer iterations than this (known when compiling) stays NumPy: there is
little per-call overhead to save for the compile it costs."""


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
    if any(n.op == TRY for b in region.blocks for n in b.walk()):
        return "the loop holds a try statement, which runs in Python"
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
    """The auto backend's cost rule (see the module docstring and the constants above): per
    iteration, the NumPy calls a kernel saves against what it costs more per element."""
    trips = _trip_count(region)
    if trips is not None and trips < AUTO_MIN_ITERATIONS:
        return False
    saved_ns = 0.0
    writes = any(n.op.writes is not None for n in _ops(region))
    for node in _ops(region):
        operands = node.inputs if node.op.name in PRODUCTS else ()
        sized = [*node.outputs, *(v for v in operands if writes or defined_inside(v, region))]
        if any(is_array(v.type) and elements(v.type) > AUTO_MAX_ELEMENTS for v in sized):
            return False
        if not any(is_array(v.type) for v in (*node.inputs, *node.outputs)):
            continue  # NOTE: Python numbers and 0-d values: a few tens of ns either way
        saved_ns += NUMPY_CALL_NS
        extra = KERNEL_EXTRA_NS.get(node.op.name, 0.0)
        if node.op.name in SCALAR_LOOP_EXTRA_NS and _reads_carried(node, region):
            extra = SCALAR_LOOP_EXTRA_NS[node.op.name]
        saved_ns -= extra * max((elements(v.type) for v in node.outputs if is_array(v.type)),
                                default=0)
    return saved_ns > 0


def _reads_carried(node: Node, region: Node) -> bool:
    """True if the element loop computing `node` (with the elementwise ops feeding it, which
    the kernel fuses into it) reads an array that is a block parameter of `region` or of a
    region inside it (a carried value)."""
    for value in node.inputs:
        producer = value.producer
        if producer is None:
            if is_array(value.type) and defined_inside(value, region):
                return True
        elif not producer.is_region and producer.op.elementwise \
                and _reads_carried(producer, region):
            return True
    return False


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
