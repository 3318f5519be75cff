"""A compile's stages as text (the functions' source, the IR before and after each pass, the
generated code) and `StageFiles`, which writes them as numbered files in one directory:
`00_source.py`, `01_ir.txt`, `02_fold_constants.txt`, ..., `NN_code.py` (IR stages as `.dot` or
`.svg` in those formats). `amber dump --out-dir` and `set_context(save_graphs=True)` both use it.
"""
from __future__ import annotations

import re
import tempfile
import textwrap
from pathlib import Path
from typing import Any, Sequence

GRAPH_FORMATS = ("text", "dot", "svg")
_SUFFIX = {"text": ".txt", "dot": ".dot", "svg": ".svg"}
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def sources_text(sources: Sequence[str], titles: Sequence[str] = ()) -> str:
    """The source of every function compiled, each under a header naming it
    (`# --- Conv2d.construct`: the class of each inlined construct)."""
    parts = []
    for i, text in enumerate(sources):
        title = titles[i] if i < len(titles) else ""
        if not title:
            head = next((line.strip() for line in text.splitlines()
                         if line.lstrip().startswith("def ")), "")
            title = head.removesuffix(":")
        parts.append(f"# --- {title}\n{textwrap.dedent(text)}")
    return "\n".join(parts)


def render_graph(graph: Any, fmt: str) -> str:
    """The graph as IR text, DOT, or SVG (RuntimeError if Graphviz is missing or fails)."""
    from ..graph import print_graph
    if fmt == "text":
        return print_graph(graph)
    from ..graph import render, to_dot
    if fmt == "dot":
        return to_dot(graph)
    if fmt != "svg":
        raise ValueError(f"graph format must be one of {', '.join(GRAPH_FORMATS)}, not {fmt!r}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "graph.svg"
        render(graph, str(path), "svg")
        return path.read_text(encoding="utf-8")


class StageFiles:
    """Writes the stages of one compile into `directory`, numbered in the order they come."""

    def __init__(self, directory: str | Path, fmt: str = "text") -> None:
        if fmt not in GRAPH_FORMATS:
            raise ValueError(f"graph format must be one of {', '.join(GRAPH_FORMATS)}, "
                             f"not {fmt!r}")
        self.directory = Path(directory)
        self.fmt = fmt
        self.written: list[Path] = []

    def write(self, name: str, text: str, suffix: str) -> Path:
        """Write `text` as the next numbered file `NN_name<suffix>`."""
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / f"{len(self.written):02d}_{_UNSAFE.sub('_', name)}{suffix}"
        path.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
        self.written.append(path)
        return path

    def source(self, sources: Sequence[str], titles: Sequence[str] = ()) -> Path:
        return self.write("source", sources_text(sources, titles), ".py")

    def graph(self, name: str, graph: Any) -> Path:
        return self.write(name, render_graph(graph, self.fmt), _SUFFIX[self.fmt])

    def on_pass(self, report: Any, graph: Any) -> Path:
        return self.graph(report.name, graph)

    def code(self, source: str) -> Path:
        return self.write("code", source, ".py")


def next_directory(root: str | Path, title: str) -> Path:
    """A new, empty directory `<root>/<title>_<n>` for one compile's stages (the first n not
    taken, also by another process saving at the same time)."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    base = _UNSAFE.sub("_", title) or "graph"
    n = 0
    while True:
        path = root / f"{base}_{n}"
        try:
            path.mkdir()
            return path
        except FileExistsError:
            n += 1
