"""Buffers kept across calls: the large temporaries of a call that never leave it are computed
into arrays the next call reuses (`np.matmul(x, w.T, out=buffers.x)`), as hand-written NumPy
preallocates its activations and gradients. A fresh array of that size comes from the system
allocator, which hands freed memory back to the operating system between calls; the next call
then faults every page in again (an MLP train step: 164 minor faults a call, 1.29x the hand
code's time, against none and 1.05x with the buffers; benchmarks/step_levers.py).

A temporary qualifies when it is made in the function's top-level block (so once a call; not
in a loop or an arm) by an op with a form writing into `out` (`OpDef.into_template`), has a
static shape of at least `REUSE_MIN_BYTES`, and its buffer stays inside the call: every use
reads it without keeping it (a `fresh` or `reads_only` op) or writes in place over it, and the
same holds for that op's result. Not returned, not yielded by a region, not in a tuple or list,
never viewed, never handed to a callee.

The buffers are a class the module defines (`Buffers`, one array attribute per temporary); the
entry function takes one more parameter, `buffers`, and is decorated with
`@reuses_buffers(Buffers)`, which keeps a free list: a call takes a set (or makes one when none
is idle: the first call, two threads at once, a recursive call) and puts it back when it
returns or raises. So compiled functions stay re-entrant and thread-safe, and each set is held
for later calls (memory the process keeps, like the hand code's preallocated arrays).
"""
from __future__ import annotations

import math
from typing import Any, Callable
from ..graph import Block, Graph, Node, Tensor, Value
from ..graph.ir import INPLACE_ATTR, INTO_ROW_ATTR
from .lowering import inplace_input

REUSE_MIN_BYTES = 16 * 1024
"""Smaller temporaries are made fresh: NumPy and the allocator serve them cheaply, and a plain
expression reads better (and can be inlined into its reader)."""

REUSE_MAX_BYTES = 64 * 1024 * 1024
"""At most this much kept per set of buffers; temporaries past it are made fresh."""

PARAMETER = "buffers"
"""The entry function's parameter receiving a set of buffers."""


def reused_temporaries(graph: Graph) -> list[Node]:
    """The nodes whose results go into kept buffers, in program order."""
    chosen, total = [], 0
    for node in graph.body.nodes:
        size = _buffer_bytes(node)
        if size is None or total + size > REUSE_MAX_BYTES or not _stays_inside(node.output):
            continue
        chosen.append(node)
        total += size
    return chosen


def buffer_order(node: Node) -> str:
    """The memory order of `node`'s kept buffer: the one its result would have had without it,
    so that a chain of ops on Fortran-ordered arrays (turned products, see
    graph/passes/orient_products.py) does not write one into a C-ordered buffer, a transposing
    copy (an MLP's ReLU mask took 4.5x the time). That is the op's `OpDef.buffer_order`, or for
    an elementwise op NumPy's (order "K"): its first input of the result's shape's."""
    while node.op.elementwise:
        shape = node.output.type.shape
        source = next((v.producer for v in node.inputs
                       if isinstance(v.type, Tensor) and v.type.shape == shape), None)
        if source is None or source.is_region or len(source.outputs) != 1:
            return "C"
        node = source
    return node.op.buffer_order(node.op_attrs)


def _buffer_bytes(node: Node) -> int | None:
    """The bytes of `node`'s result if it could be computed into a buffer, else None."""
    if node.is_region or len(node.outputs) != 1 or not node.op.fresh or \
            INPLACE_ATTR in node.attrs or INTO_ROW_ATTR in node.attrs:
        return None
    out = node.output.type
    if not (isinstance(out, Tensor) and out.is_static and out.rank >= 1):
        return None
    size = math.prod(out.shape) * out.dtype.itemsize
    attrs = node.op_attrs
    if size < REUSE_MIN_BYTES or node.op.into_template(attrs) is None:
        return None
    return size


def _stays_inside(value: Value) -> bool:
    """Nothing keeps `value`'s buffer: every user reads it and makes a fresh result, or writes
    in place over it into a result of which the same holds."""
    for use in value.uses:
        user = use.user
        if isinstance(user, Block) or user.is_region:
            return False  # NOTE: a block result (returned, yielded) or a region's operand
        op = user.op
        if user.attrs.get(INPLACE_ATTR) == use.index and inplace_input(user) is not None or \
                op.same_object and op.writes == use.index:
            if not _stays_inside(user.output):  # NOTE: the result is this very buffer
                return False
        elif not (op.fresh or op.reads_only or _copied_into_array(user, use.index)):
            return False
    return True


def _copied_into_array(user: Node, index: int) -> bool:
    """`user` copies its input `index` into another array it writes in place (`param -=
    value`, `x[i] = value`, a stack's row), keeping no reference to it."""
    op = user.op
    return op.same_object and op.writes is not None and op.writes != index and \
        isinstance(user.inputs[op.writes].type, Tensor)


def buffers_class(name: str, buffers: list[tuple[str, Tensor, str]]) -> str:
    """The source of the class holding one set of buffers: `(attribute, type, memory order)`
    each (`OpDef.buffer_order`)."""
    slots = ", ".join(repr(attr) for attr, _, _ in buffers)
    lines = [f"class {name}:",
             '    """The large temporaries of one call that never leave it, kept for later calls',
             '    (see reuses_buffers)."""',
             f"    __slots__ = ({slots}{',' if len(buffers) == 1 else ''})",
             "",
             "    def __init__(self):"]
    lines += [f"        self.{attr} = np.empty({t.shape!r}, {t.dtype.name!r}"
              f"{'' if order == 'C' else f', order={order!r}'})"
              for attr, t, order in buffers]
    return "\n".join(lines) + "\n"


def reuses_buffers(make_buffers):  # NOTE: unannotated: copied into modules, comments kept
    """Decorate a function taking a set of buffers (`make_buffers()`) as its last argument:
    each call takes an idle set or makes one, and puts it back when it returns or raises, so
    calls running at once (threads, recursion) never share one."""
    idle = []

    def decorate(fn):
        def call(*args):
            try:
                buffers = idle.pop()
            except IndexError:  # NOTE: none idle: the first call, or calls running at once
                buffers = make_buffers()
            try:
                return fn(*args, buffers)
            finally:
                idle.append(buffers)
        call.__name__, call.__qualname__, call.__wrapped__ = fn.__name__, fn.__qualname__, fn
        call.idle_buffers = idle  # NOTE: what benchmarks count as memory kept between calls
        return call
    return decorate


def kept_bytes(fn: Callable[..., Any]) -> int:
    """The bytes of the buffer sets a generated function (`CompiledFunction.fn`) keeps idle
    between calls; 0 for code without kept buffers."""
    while not hasattr(fn, "idle_buffers") and hasattr(fn, "__wrapped__"):
        fn = fn.__wrapped__
    return sum(getattr(buffers, attr).nbytes for buffers in getattr(fn, "idle_buffers", ())
               for attr in type(buffers).__slots__)
