"""Saving a graph to one `.npz` file and loading it back: a JSON member holds the structure,
and every array (or NumPy scalar) attribute is its own array member, never JSON.
Types are stored in their text form; loading re-creates nodes from the op registry.
"""
from __future__ import annotations

import builtins
import io
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from ..ops import Dyn, lookup
from .ir import REGION_KINDS, Block, Graph, Loc, Node, Value
from .literals import parse_type

FORMAT = "amber-graph"
VERSION = 1
_STRUCTURE = "graph.json"


class GraphFileError(ValueError):
    """A saved graph that cannot be read: not an amber graph file, damaged, or too new."""


def save_graph(graph: Graph, path: str | Path) -> None:
    """Write `graph` to `path` (atomically: a temporary file is renamed into place)."""
    encoder = _Encoder()
    try:
        structure = {"format": FORMAT, "version": VERSION, "graph": encoder.graph(graph)}
    except KeyError as exc:
        raise ValueError(f"cannot save graph @{graph.name}: it uses a value or node it does "
                         "not define (run amber.graph.verify for details)") from exc
    text = json.dumps(structure, allow_nan=False, separators=(",", ":"))
    members = {**encoder.arrays, _STRUCTURE: np.frombuffer(text.encode(), np.uint8)}
    tmp = Path(f"{path}.tmp{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            np.savez_compressed(f, **members)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def load_graph(path: str | Path) -> Graph:
    """The graph saved at `path`; raises `GraphFileError` if the file is not a valid one."""
    try:
        with open(path, "rb") as f:
            data = f.read()
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
        structure = json.loads(arrays.pop(_STRUCTURE).tobytes().decode())
    except Exception as exc:  # NOTE: zipfile/zlib/npy raise many kinds; all mean "damaged"
        raise GraphFileError(f"{path}: not a readable amber graph file ({exc})") from exc
    if not isinstance(structure, dict) or structure.get("format") != FORMAT:
        raise GraphFileError(f"{path}: not an amber graph file")
    if structure.get("version") != VERSION:
        raise GraphFileError(f"{path}: graph file version {structure.get('version')!r}, "
                             f"this amber reads version {VERSION}")
    try:
        return _Decoder(arrays).graph(structure["graph"])
    except Exception as exc:  # NOTE: any inconsistency in the structure means damage
        raise GraphFileError(f"{path}: damaged graph file ({type(exc).__name__}: {exc})") from exc


class _Encoder:
    """Graph -> JSON-ready dicts; values and nodes are numbered in order of definition."""

    def __init__(self) -> None:
        self.values: dict[Value, int] = {}
        self.nodes: dict[Node, int] = {}
        self.arrays: dict[str, np.ndarray] = {}

    def graph(self, graph: Graph) -> dict:
        return {"name": graph.name, "meta": self.attr(graph.facts()),
                "body": self.block(graph.body)}

    def define(self, values: list[Value]) -> list[list]:
        for value in values:
            self.values[value] = len(self.values)
        return [[self.values[v], v.name, str(v.type)] for v in values]

    def block(self, block: Block) -> dict:
        params = self.define(block.params)
        nodes = [self.node(n) for n in block.nodes]
        results = [self.values[v] for v in block.results]
        return {"params": params, "nodes": nodes, "results": results}

    def node(self, node: Node) -> dict:
        self.nodes[node] = len(self.nodes)
        loc = node.loc
        return {"op": node.name,
                "inputs": [self.values[v] for v in node.inputs],
                "attrs": {k: self.attr(v) for k, v in node.attrs.items()},
                "control": [self.nodes[c] for c in node.control_inputs],
                "loc": _encode_loc(loc),
                "blocks": [self.block(b) for b in node.blocks],
                "outputs": self.define(node.outputs)}

    def attr(self, value: Any) -> Any:
        """JSON for one attribute value; kinds JSON lacks are tagged one-key objects."""
        if value is None or type(value) in (bool, int, str):  # NOTE: not np.float64 & co.
            return value
        if type(value) is float:
            return value if np.isfinite(value) else {"float": repr(value)}
        if isinstance(value, np.ndarray | np.generic):
            if value.dtype.hasobject:
                raise TypeError(f"cannot save an object array attribute: {value!r}")
            key = f"a{len(self.arrays)}"
            self.arrays[key] = np.asarray(value)
            return {"array" if isinstance(value, np.ndarray) else "scalar": key}
        return self.tagged(value)

    def tagged(self, value: Any) -> dict:
        if value is Ellipsis:
            return {"ellipsis": None}
        if isinstance(value, Dyn):
            return {"dyn": value.k}
        if isinstance(value, slice):
            return {"slice": [self.attr(p) for p in (value.start, value.stop, value.step)]}
        if isinstance(value, tuple | list):
            return {type(value).__name__: [self.attr(v) for v in value]}
        if isinstance(value, dict):
            return {"dict": [[self.attr(k), self.attr(v)] for k, v in value.items()]}
        if isinstance(value, np.dtype):
            return {"dtype": value.str}
        if isinstance(value, type):
            for module, prefix in ((builtins, "builtins"), (np, "np")):
                if getattr(module, value.__name__, None) is value:
                    return {"type": f"{prefix}.{value.__name__}"}
        raise TypeError(f"cannot save an attribute of type {type(value).__name__}: {value!r}")


class _Decoder:
    """JSON dicts -> Graph, checking what it reads (damage raises, never builds half a graph)."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        self.arrays = arrays
        self.values: dict[int, Value] = {}
        self.nodes: list[Node] = []

    def graph(self, data: dict) -> Graph:
        body = self.block(data["body"])
        graph = Graph(data["name"], body)
        graph.set_facts(self.attr(data["meta"]))
        return graph

    def define(self, values: list[Value], data: list[list]) -> None:
        for value, (vid, _, _) in zip(values, data, strict=True):
            if vid in self.values:
                raise ValueError(f"value #{vid} defined twice")
            self.values[vid] = value

    def block(self, data: dict) -> Block:
        params = data["params"]
        block = Block([parse_type(t) for _, _, t in params], [n for _, n, _ in params])
        self.define(block.params, params)
        for node in data["nodes"]:
            block.append(self.node(node))
        block.set_results([self.values[v] for v in data["results"]])
        return block

    def node(self, data: dict) -> Node:
        name = data["op"]
        op = name if name in REGION_KINDS else lookup(name)
        inputs = [self.values[v] for v in data["inputs"]]
        control = [self.nodes[c] for c in data["control"]]
        if not all(isinstance(c, Node) for c in control):
            raise ValueError("a control edge points at an enclosing node")
        loc = _decode_loc(data["loc"])
        index = len(self.nodes)
        self.nodes.append(None)  # NOTE: reserve the number; nested nodes are numbered after
        blocks = [self.block(b) for b in data["blocks"]]
        outs = data["outputs"]
        node = Node(op, inputs, {k: self.attr(v) for k, v in data["attrs"].items()},
                    [parse_type(t) for _, _, t in outs], [n for _, n, _ in outs], blocks, loc,
                    control)
        self.define(node.outputs, outs)
        self.nodes[index] = node
        return node

    def attr(self, data: Any) -> Any:
        if data is None or isinstance(data, bool | int | float | str):
            return data
        if isinstance(data, dict) and len(data) == 1:
            (tag, body), = data.items()
            return _TAGS[tag](self, body)
        raise ValueError(f"unreadable attribute {data!r}")

    @staticmethod
    def type_object(name: str) -> type:
        module, _, attr = name.partition(".")
        obj = getattr({"np": np, "builtins": builtins}.get(module), attr, None)
        if not isinstance(obj, type):
            raise ValueError(f"unknown type {name!r}")
        return obj


_TAGS = {
    "float": lambda d, body: float(body),
    "array": lambda d, body: d.arrays[body],
    "scalar": lambda d, body: d.arrays[body][()],
    "ellipsis": lambda d, body: Ellipsis,
    "dyn": lambda d, body: Dyn(int(body)),
    "slice": lambda d, body: slice(*(d.attr(p) for p in body)),
    "tuple": lambda d, body: tuple(d.attr(v) for v in body),
    "list": lambda d, body: [d.attr(v) for v in body],
    "dict": lambda d, body: {d.attr(k): d.attr(v) for k, v in body},
    "dtype": lambda d, body: np.dtype(body),
    "type": lambda d, body: d.type_object(body),
}


def _encode_loc(loc: Loc | None) -> list | None:
    """[file, line, col, text] and, for an inlined line, its caller encoded the same way."""
    if loc is None:
        return None
    row: list = [loc.file, loc.line, loc.col, loc.text]
    return row if loc.caller is None else row + [_encode_loc(loc.caller)]


def _decode_loc(row: list | None) -> Loc | None:
    if row is None:
        return None
    file, line, col, text, *caller = row
    return Loc(file, line, col, text, _decode_loc(caller[0]) if caller else None)
