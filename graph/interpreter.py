"""A reference interpreter for the IR: runs op kernels node by node and If/While/For regions
natively. It is the slow, obviously-right oracle that passes and codegen are tested against.
"""
from __future__ import annotations

from typing import Any

from ..ops import python as pyops
from ..ops.symbolic import holds_symbols, substitute
from .ir import FOR, IF, TRY, WHILE, Block, Graph, Node, Value
from .sizes import bind_sizes, size_sources


class Unbound:
    """The run-time value of `undefined`: a variable no path bound. Using it raises."""
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def error(self) -> UnboundLocalError:
        return UnboundLocalError(
            f"cannot access local variable {self.name!r} where it is not associated with a value")

    def __repr__(self) -> str:
        return f"<unbound {self.name}>"


def run_graph(graph: Graph, *args: Any) -> Any:
    """Execute `graph` on `args`: its single output, a tuple of several, or None for none."""
    if len(args) != len(graph.inputs):
        raise TypeError(f"graph @{graph.name} takes {len(graph.inputs)} argument(s), "
                        f"got {len(args)}")
    types = [v.type for v in graph.inputs]
    sizes = bind_sizes(types, args) if size_sources(types) else {}
    results = _Interpreter(sizes).call(graph.body, args)
    for value in results:
        if isinstance(value, Unbound):
            raise value.error()  # NOTE: returning an unbound variable reads it, as in Python
    if len(results) == 1:
        return results[0]
    return tuple(results) if results else None


class _Interpreter:
    """Holds the run-time value of every SSA value seen so far (blocks may read outer ones) and
    the call's symbolic sizes, put into attributes before kernels see them."""

    def __init__(self, sizes: dict[str, int] | None = None) -> None:
        self.env: dict[Value, Any] = {}
        self.sizes = sizes or {}

    def call(self, block: Block, args: Any) -> list[Any]:
        """Bind `block`'s params to `args`, run its nodes in order, return its results."""
        for param, arg in zip(block.params, args, strict=True):
            self.env[param] = arg
        for node in block.nodes:
            self.node(node)
        return [self.env[v] for v in block.results]

    def node(self, node: Node) -> None:
        if node.op == IF:
            outs = self.run_if(node)
        elif node.op == WHILE:
            outs = self.run_while(node)
        elif node.op == FOR:
            outs = self.run_for(node)
        elif node.op == TRY:
            outs = self.run_try(node)
        else:
            outs = [self.run_op(node)]
        for value, out in zip(node.outputs, outs, strict=True):
            self.env[value] = out

    def run_op(self, node: Node) -> Any:
        if node.op is pyops.undefined:
            return Unbound(node.attrs["name"])
        inputs = [self.read(v) for v in node.inputs]
        # NOTE: `__`-prefixed attributes are codegen hints (INPLACE_ATTR), not op arguments
        attrs = node.op_attrs
        if holds_symbols(attrs):
            attrs = substitute(attrs, self.sizes)
        return node.op.kernel(*inputs, **attrs)

    def read(self, value: Value) -> Any:
        result = self.env[value]
        if isinstance(result, Unbound):
            raise result.error()
        return result

    def run_if(self, node: Node) -> list[Any]:
        taken = node.then if _truth(self.read(node.inputs[0])) else node.else_
        return self.call(taken, ())

    def run_while(self, node: Node) -> list[Any]:
        carried = [self.env[v] for v in node.inputs]
        while _truth(self.call(node.cond, carried)[0]):
            carried = self.call(node.body, carried)
        return carried

    def run_for(self, node: Node) -> list[Any]:
        start, stop, step = (self.read(v) for v in node.bounds)
        carried = [self.env[v] for v in node.inits]
        for index in range(start, stop, step):
            carried = self.call(node.body, [index, *carried])
        return carried

    def run_try(self, node: Node) -> list[Any]:
        final = node.finally_
        try:
            try:
                merged = self.call(node.try_body, ())
            except node.attrs["catch"] as exc:  # NOTE: `except ()` catches nothing
                merged = self.call(node.handler, (exc,))
        finally:
            tail = self.call(final, ()) if final is not None else []
        return merged + tail


def _truth(flag: Any) -> bool:
    if isinstance(flag, Unbound):
        raise flag.error()
    return bool(flag)
