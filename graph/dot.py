"""Graphviz export of the IR: ops as boxes, values as edges labelled with their types, control
edges dashed, every region a cluster holding one cluster per block (params in, `yield` out).
`render` runs Graphviz's `dot` program when it is installed.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from ..ops import OpDef
from .ir import Block, Graph, Node, Value
from .printer import Namer, format_attrs, region_roles

LABEL_LIMIT = 48
"""Longer attribute text in a node label is cut (the text IR has it in full)."""


def to_dot(graph: Graph) -> str:
    """The graph in Graphviz's DOT language."""
    return _Dot().graph(graph)


def render(graph: Graph, path: str | Path, fmt: str = "svg") -> Path:
    """Draw `graph` into `path` as `fmt` ("svg" or "png") with Graphviz's `dot`."""
    if fmt not in ("svg", "png"):
        raise ValueError(f"render: fmt must be 'svg' or 'png', not {fmt!r}")
    exe = shutil.which("dot")
    if exe is None:
        raise RuntimeError(
            "render needs Graphviz's `dot` program, which is not on PATH. Install Graphviz "
            "(Debian/Ubuntu: `apt-get install graphviz`; macOS: `brew install graphviz`), or "
            "write `to_dot(graph)` to a .dot file and render it elsewhere.")
    done = subprocess.run([exe, f"-T{fmt}", "-o", str(path)], input=to_dot(graph), text=True,
                          capture_output=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"dot failed (exit {done.returncode}): {done.stderr.strip()}")
    return Path(path)


def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


class _Dot:
    """Writes DOT statements; ids are `n<k>` for nodes and `b<k>_...` for block parts."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.namer = Namer()
        self.ids: dict[Node | Block, str] = {}
        self.sources: dict[Value, str] = {}  # the DOT node each value leaves from
        self.edges: list[str] = []

    def graph(self, graph: Graph) -> str:
        self.lines += [f"digraph {_quote(graph.name)} {{",
                       '  node [shape=box, fontname="monospace", fontsize=10];',
                       '  edge [fontname="monospace", fontsize=9];']
        for i, param in enumerate(graph.inputs):
            pid = f"in{i}"
            self.sources[param] = pid
            label = f"{self.namer.value(param)}: {param.type}"
            self.lines.append(f"  {pid} [label={_quote(label)}, shape=ellipse];")
        self.block_nodes(graph.body, 1)
        self.lines.append('  return [label="return", shape=invhouse];')
        self.results(graph.body, "return")
        return "\n".join(self.lines + self.edges + ["}"]) + "\n"

    def block_nodes(self, block: Block, depth: int) -> None:
        for node in block.nodes:
            if node.is_region:
                self.region(node, depth)
            else:
                self.op(node, depth)
            for dep in node.control_inputs:
                self.edges.append(f"  {self.exit_of(dep)} -> {self.ids[node]} "
                                  '[style=dashed, color=gray40, label="after"];')

    def op(self, node: Node, depth: int) -> None:
        nid = self.ids[node] = f"n{len(self.ids)}"
        outs = ", ".join(self.namer.value(v) for v in node.outputs)
        label = f"{outs} = {node.name}" if outs else node.name
        attrs = format_attrs(node.attrs, node.op if isinstance(node.op, OpDef) else None)
        if attrs:
            label += "\n" + (attrs if len(attrs) <= LABEL_LIMIT else attrs[:LABEL_LIMIT] + "...")
        shape = ", style=bold" if node.effectful else ""
        self.lines.append("  " * depth + f"{nid} [label={_quote(label)}{shape}];")
        self.inputs(node, nid)
        for value in node.outputs:
            self.sources[value] = nid

    def region(self, node: Node, depth: int) -> None:
        nid = self.ids[node] = f"n{len(self.ids)}"
        pad = "  " * depth
        outs = ", ".join(self.namer.value(v) for v in node.outputs)
        self.lines += [f"{pad}subgraph cluster_{nid} {{",
                       f"{pad}  label={_quote((outs + ' = ' if outs else '') + node.name)};",
                       f"{pad}  style=rounded;",
                       f"{pad}  {nid} [label={_quote(node.name)}, shape=diamond];"]
        self.inputs(node, nid)
        roles = region_roles(node.op, node.attrs)
        for i, block in enumerate(node.blocks):
            bid = self.ids[block] = f"{nid}_b{i}"
            role = roles[i] if i < len(roles) else f"block{i}"
            self.lines += [f"{pad}  subgraph cluster_{bid} {{", f"{pad}    label={_quote(role)};"]
            for k, param in enumerate(block.params):
                pid = self.sources[param] = f"{bid}_p{k}"
                label = f"{self.namer.value(param)}: {param.type}"
                self.lines.append(f"{pad}    {pid} [label={_quote(label)}, shape=ellipse];")
                self.edges.append(f"  {nid} -> {pid} [style=dotted, arrowhead=none];")
            self.block_nodes(block, depth + 2)
            self.lines += [f'{pad}    {bid}_yield [label="yield", shape=invhouse];', f"{pad}  }}"]
            self.results(block, f"{bid}_yield")
            self.edges.append(f"  {bid}_yield -> {nid}_end [style=dotted];")
        self.lines += [f'{pad}  {nid}_end [label={_quote("end " + node.name)}, shape=house];',
                       f"{pad}}}"]
        for value in node.outputs:
            self.sources[value] = f"{nid}_end"

    def inputs(self, node: Node, target: str) -> None:
        for value in node.inputs:
            self.edge(value, target)

    def results(self, block: Block, target: str) -> None:
        for value in block.results:
            self.edge(value, target)

    def edge(self, value: Value, target: str) -> None:
        source = self.sources.get(value, "undefined")
        label = f"{self.namer.value(value)}: {value.type}"
        self.edges.append(f"  {source} -> {target} [label={_quote(label)}];")

    def exit_of(self, node: Node) -> str:
        nid = self.ids.get(node, "undefined")
        return f"{nid}_end" if node.is_region else nid
