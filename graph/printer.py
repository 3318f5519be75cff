"""Prints a `Graph` as text IR, the form `parser.parse_graph` reads back exactly (the parser's
docstring gives the grammar). The printer never fails, even on a malformed graph, so the
verifier can show one; values it cannot spell print as `<opaque ...>`, which does not parse.
"""
from __future__ import annotations

import builtins
import re
from typing import Any, Sequence

import numpy as np

from ..ops import REQUIRED, Dyn, OpDef
from .ir import FOR, IF, TRY, WHILE, Block, Graph, Node, Value
from .types import Sym, Tensor, dtype_short

ROLES: dict[str, tuple[str, ...]] = {IF: ("then", "else"), WHILE: ("cond", "body"), FOR: ("body",)}
"""The printed role name of each block of a region node, by kind."""
ROLES[TRY] = ("try", "except", "finally")


def region_roles(kind: str, attrs: dict[str, Any]) -> tuple[str, ...]:
    """The role names of a region's blocks in order (a try has an except block only when it
    catches something; its finally block is optional and printed last)."""
    if kind == TRY and not attrs.get("catch"):
        return ("try", "finally")
    return ROLES.get(kind, ())

INDENT = "  "
COMMENT_COLUMN = 48
"""Source-location comments start at this column (or two spaces after a longer line)."""

_UNSAFE = re.compile(r"[^A-Za-z0-9_.]")


def print_graph(graph: Graph) -> str:
    """The text form of `graph`."""
    return _Printer(graph.body).graph(graph)


def print_graph_lines(graph: Graph) -> tuple[str, dict[int, Node]]:
    """The text form of `graph` and the node printed on each line (0-based), for tools that
    link the text back to nodes (the compile report)."""
    printer = _Printer(graph.body)
    text = printer.graph(graph)
    return text, {line: node for node, line in printer.node_line.items()}


def print_block(block: Block) -> str:
    """A block's statements (and its `yield`) on their own, for debugging."""
    printer = _Printer(block)
    printer.block_body(block, 0, "yield")
    return "\n".join(printer.lines) + "\n"


def print_node(node: Node) -> str:
    """One node (with its nested blocks) on its own, for debugging and error messages."""
    printer = _Printer(node)
    printer.node(node, 0)
    return "\n".join(printer.lines) + "\n"


def print_marked(graph: Graph, marks: Sequence[tuple[Node | Block | Graph, str, Sequence[Any]]]
                 ) -> tuple[list[str], str]:
    """The IR with a caret line and a message under the line of each mark `(where, message,
    refs)`; `{0}`, `{1}`... in a message become the printed names of `refs` (values or nodes).
    Returns the messages (each prefixed with what it is about) and the marked text."""
    printer = _Printer(graph.body)
    try:
        printer.graph(graph)
    except Exception as exc:  # NOTE: a badly broken graph may not print; still list the marks
        printer.lines = [f"(the IR could not be printed: {type(exc).__name__}: {exc})"]
    messages, notes = [], {}
    for where, message, refs in marks:
        for i, ref in enumerate(refs):
            name = printer.namer.value(ref) if isinstance(ref, Value) \
                else printer.namer.node_ref(ref)
            message = message.replace("{%d}" % i, name)
        messages.append(f"{printer.describe(where)}: {message}")
        notes.setdefault(printer.line_of(where), []).append(messages[-1])
    out = []
    for i, line in enumerate(printer.lines):
        out.append(line)
        code = line.split("  # ")[0].rstrip()
        indent = len(code) - len(code.lstrip())
        out += [" " * indent + "^" * max(3, len(code) - indent) + " " + m for m in notes.get(i, ())]
    return messages, "\n".join(out)


def is_short_dtype(dtype: np.dtype) -> bool:
    """True if the dtype has a short text name (`f32`); every short name differs from NumPy's."""
    return dtype_short(dtype) != np.dtype(dtype).name


def format_float(x: float | np.floating) -> str:
    """The shortest text that parses back to exactly `x` (NumPy floats keep their precision)."""
    if type(x) is float:  # NOTE: not isinstance: np.float64 subclasses float
        return repr(x)
    text = str(x)
    back = np.array(float(text)).astype(x.dtype)
    if back == x or (np.isnan(back) and np.isnan(x)):
        return text
    return repr(float(x))  # NOTE: the float64 decimal is exact for narrower floats


def _array_item(x: Any) -> str:
    if isinstance(x, np.bool_):
        return str(bool(x))
    if isinstance(x, np.integer):
        return str(int(x))
    return format_float(x)


def format_attr(value: Any) -> str:
    """The text of an attribute value (also used for `meta`)."""
    if value is None or value is Ellipsis:
        return repr(value) if value is None else "..."
    for kind in (bool, int, str):  # NOTE: subclasses (np.str_, IntEnum) print as the base type
        if isinstance(value, kind):
            return repr(kind(value))
    if type(value) is float:
        return format_float(value)
    if isinstance(value, Dyn):
        return f"${value.k}"
    if isinstance(value, Sym):  # NOTE: bare when it reads as one (`N`, `N//2-2`)
        text = str(value)
        return text if text[0].isalpha() else f"sym<{text}>"
    if isinstance(value, slice):
        parts = (format_attr(p) for p in (value.start, value.stop, value.step))
        return f"slice({', '.join(parts)})"
    if isinstance(value, tuple):
        items = [format_attr(v) for v in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(value, list):
        return "[" + ", ".join(format_attr(v) for v in value) + "]"
    if isinstance(value, dict):
        items = (f"{format_attr(k)}: {format_attr(v)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    return _format_numpy(value) or _format_type_object(value) or _opaque(value)


def _format_numpy(value: Any) -> str | None:
    if isinstance(value, np.dtype):
        return dtype_short(value) if is_short_dtype(value) else f"dtype({value.str!r})"
    if isinstance(value, np.generic | np.ndarray) and not _printable_dtype(value.dtype):
        return None
    if isinstance(value, np.generic):
        return f"{dtype_short(value.dtype)}({_array_item(value)})"
    if isinstance(value, np.ndarray):
        items = ", ".join(_array_item(x) for x in value.ravel())
        return f"array<{Tensor(value.shape, value.dtype)}>[{items}]"
    return None


def _printable_dtype(dtype: np.dtype) -> bool:
    return dtype.kind in "biuf" and is_short_dtype(dtype)


def _format_type_object(value: Any) -> str | None:
    if not isinstance(value, type):
        return None
    if getattr(builtins, value.__name__, None) is value:
        return value.__name__
    if getattr(np, value.__name__, None) is value:
        return f"np.{value.__name__}"
    return None


def _opaque(value: Any) -> str:
    return f"<opaque {type(value).__name__}>"


def format_loc(node: Node) -> str:
    """`file:line`, or `file:line:col` when the column is not 0."""
    loc = node.loc
    if loc is None:
        return ""
    return f"{loc.file}:{loc.line}" + (f":{loc.col}" if loc.col else "")


class Namer:
    """Unique printed names: `%hint`, `%hint_1` when a hint repeats, `%0`, `%1` for no hint."""

    def __init__(self) -> None:
        self.names: dict[Value | Node, str] = {}
        self.used: set[str] = set()
        self.anonymous = 0

    def value(self, value: Value) -> str:
        if value not in self.names:
            self.names[value] = self._fresh(getattr(value, "name", ""))
        return "%" + self.names[value]

    def label(self, node: Node) -> str:
        """A zero-output node's name, for `after` edges pointing at it."""
        if node not in self.names:
            self.names[node] = self._fresh(node.name if isinstance(node, Node) else "node")
        return "^" + self.names[node]

    def node_ref(self, node: Node) -> str:
        outputs = getattr(node, "outputs", None)
        return self.value(outputs[0]) if outputs else self.label(node)

    def _fresh(self, hint: str) -> str:
        base = _UNSAFE.sub("_", str(hint or ""))
        if not base:
            self.anonymous += 1
            return str(self.anonymous - 1)
        if base.isdigit():
            base = "_" + base  # NOTE: all-digit names are reserved for values without a hint
        name, k = base, 1
        while name in self.used:
            name, k = f"{base}_{k}", k + 1
        self.used.add(name)
        return name


def iter_nodes(root: Block | Node) -> list[Node]:
    """Every node under `root` in order, visiting each block once even if it is nested in
    itself (a malformed graph must not send the printer or verifier into endless recursion)."""
    out: list[Node] = []
    seen: set[Block] = set()

    def visit_block(block: Block) -> None:
        if not isinstance(block, Block) or block in seen:
            return
        seen.add(block)
        for node in list(block.nodes):
            visit_node(node)

    def visit_node(node: Node) -> None:
        if isinstance(node, Node):
            out.append(node)
            for block in list(node.blocks):
                visit_block(block)

    visit_node(root) if isinstance(root, Node) else visit_block(root)
    return out


class _Printer:
    """Writes lines and remembers where each node and block landed (for verifier reports)."""

    def __init__(self, root: Block | Node) -> None:
        self.referenced = {c for n in iter_nodes(root) for c in n.control_inputs}
        self.lines: list[str] = []
        self.namer = Namer()
        self.node_line: dict[Node, int] = {}
        self.block_line: dict[Block, int] = {}
        self.on_stack: set[Block] = set()

    def graph(self, graph: Graph) -> str:
        params = self.params(graph.body.params)
        name = graph.name if re.fullmatch(r"[A-Za-z_][\w.]*", str(graph.name)) \
            else repr(str(graph.name))
        self.lines.append(f"graph @{name}{params} {{")
        if meta := graph.facts():
            self.lines.append(f"{INDENT}meta {format_attr(meta)}")
        self.block_body(graph.body, 1, "return")
        self.lines.append("}")
        return "\n".join(self.lines) + "\n"

    def describe(self, where: Node | Block | Graph) -> str:
        """`%y = relu`, `block #1 of %y = if`, `graph body`: what a message is about."""
        if isinstance(where, Node):
            outs = [self.namer.value(v) for v in where.outputs if isinstance(v, Value)]
            return f"{', '.join(outs) if outs else self.namer.label(where)} = {where.name}"
        if isinstance(where, Block) and isinstance(where.parent, Node):
            i = next((k for k, b in enumerate(where.parent.blocks) if b is where), 0)
            return f"block #{i} of {self.describe(where.parent)}"
        return "graph body" if isinstance(where, Block) else f"graph @{getattr(where, 'name', '')}"

    def line_of(self, where: Node | Block | Graph) -> int:
        if isinstance(where, Node):
            return self.node_line.get(where, 0)
        return self.block_line.get(where, 0) if isinstance(where, Block) else 0

    def params(self, params: list[Value]) -> str:
        return "(" + ", ".join(f"{self.namer.value(p)}: {p.type}" for p in params) + ")"

    def block_body(self, block: Block, depth: int, terminator: str) -> None:
        if block in self.on_stack:
            self.lines.append(INDENT * depth + "<cycle: block nested in itself>")
            return
        self.on_stack.add(block)
        for node in list(block.nodes):
            self.node(node, depth)
        results = ", ".join(self.namer.value(v) for v in block.results)
        self.block_line[block] = len(self.lines)
        self.lines.append(INDENT * depth + f"{terminator} {results}".rstrip())
        self.on_stack.discard(block)

    def node(self, node: Node, depth: int) -> None:
        if not isinstance(node, Node):
            self.lines.append(INDENT * depth + f"<not a node: {node!r}>")
            return
        self.node_line[node] = len(self.lines)
        if node.outputs:
            lhs = ", ".join(self.namer.value(v) for v in node.outputs) + " = "
        else:
            lhs = self.namer.label(node) + " = " if node in self.referenced else ""
        types = " : " + ", ".join(str(v.type) for v in node.outputs) if node.outputs else ""
        after = self.after(node)
        if not node.is_region:
            self.emit(depth, f"{lhs}{node.name}({self.op_args(node)}){after}{types}", node)
            return
        inputs = " " + ", ".join(self.namer.value(v) for v in node.inputs) if node.inputs else ""
        attrs = f" [{format_attrs(node.attrs, None)}]" if node.attrs else ""
        self.emit(depth, f"{lhs}{node.name}{inputs}{attrs}{after}{types} {{", node)
        roles = region_roles(node.op, node.attrs)
        for i, block in enumerate(node.blocks):
            role = roles[i] if i < len(roles) else "block"
            params = self.params(block.params) if block.params else ""
            self.lines.append(INDENT * (depth + 1) + f"{role}{params} {{")
            self.block_body(block, depth + 2, "yield")
            self.lines.append(INDENT * (depth + 1) + "}")
        self.lines.append(INDENT * depth + "}")

    def emit(self, depth: int, text: str, node: Node) -> None:
        line = INDENT * depth + text
        loc = format_loc(node)
        if loc:
            line = line.ljust(COMMENT_COLUMN - 2) + "  # " + loc
        self.lines.append(line)

    def after(self, node: Node) -> str:
        if not node.control_inputs:
            return ""
        return " after " + ", ".join(self.namer.node_ref(c) for c in node.control_inputs)

    def op_args(self, node: Node) -> str:
        args = [self.namer.value(v) for v in node.inputs]
        attrs = format_attrs(node.attrs, node.op if isinstance(node.op, OpDef) else None)
        return ", ".join(args + ([attrs] if attrs else []))


def format_attrs(attrs: dict[str, Any], op: OpDef | None) -> str:
    """`k=v, ...`, leaving out attributes equal (in printed form) to the op's default."""
    defaults = op.attrs if op is not None else {}
    parts = []
    for key, value in attrs.items():
        text = format_attr(value)
        default = defaults.get(key, REQUIRED)
        if default is not REQUIRED and format_attr(default) == text:
            continue
        parts.append(f"{key}={text}")
    return ", ".join(parts)
