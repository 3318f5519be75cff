"""DOT export: a cluster per region and per block, block params and yields drawn, value edges
labelled with types, control edges dashed; `render` with and without Graphviz installed."""
from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from amber.graph import parse_graph, render, to_dot
from amber.graph import dot as dot_module


def edges(text: str) -> list[tuple[str, str, str]]:
    """(source, target, attributes) of every edge statement."""
    return re.findall(r"^\s*(\w+) -> (\w+) \[(.*)\];$", text, re.MULTILINE)


def test_straight_line_edges_carry_types(samples) -> None:
    text = to_dot(samples.straight_line())
    assert text.startswith('digraph "straight" {') and text.rstrip().endswith("}")
    assert text.count("{") == text.count("}")
    labels = [attrs for _, _, attrs in edges(text)]
    assert 'label="%x: f32[2,3]"' in labels
    assert 'label="%w: f32[1,3]"' in labels
    assert 'label="%out: f32[2,3]"' in labels   # the result flows into `return`
    assert "in0 [label=\"%x: f32[2,3]\", shape=ellipse];" in text
    assert "cluster" not in text


def test_regions_are_nested_clusters(samples) -> None:
    text = to_dot(samples.if_in_while())
    clusters = re.findall(r"subgraph (cluster_\w+) \{", text)
    assert len(clusters) == 6   # while, its cond and body, the if, its then and else
    labels = re.findall(r"subgraph cluster_\w+ \{\n\s*label=\"([^\"]*)\";", text)
    assert labels == ["%i_1, %acc_1 = while", "cond", "body", "%acc_4 = if", "then", "else"]
    # the if cluster sits inside the body cluster, which sits inside the while cluster
    assert text.index("label=\"body\"") < text.index("label=\"%acc_4 = if\"")
    assert '[label="%i_2: int", shape=ellipse];' in text   # a block parameter
    assert text.count('[label="yield", shape=invhouse];') == 4


def test_block_results_flow_to_yield_and_out_of_the_region(samples) -> None:
    text = to_dot(samples.for_carried())
    found = edges(text)
    region = re.search(r"subgraph cluster_(\w+) \{", text).group(1)
    yields = [e for e in found if e[1] == f"{region}_b0_yield"]
    assert [attrs for _, _, attrs in yields] == ['label="%s_3: f32[2]"', 'label="%p_2: f32[2]"',
                                                 'label="%k_3: int"']
    assert (f"{region}_b0_yield", f"{region}_end", "style=dotted") in found
    assert any(src == f"{region}_end" and "%s_1" in attrs for src, _, attrs in found)


def test_control_edges_are_dashed(samples) -> None:
    text = to_dot(samples.effects())
    dashed = [e for e in edges(text) if "style=dashed" in e[2]]
    assert len(dashed) == 3
    assert all("after" in attrs for _, _, attrs in dashed)
    assert "style=bold" in text   # effectful ops stand out


def test_labels_are_escaped() -> None:
    graph = parse_graph(r"""graph @g(%x: int) { %p = print(%x, sep='"\\') : none; return %p }""")
    line = next(line for line in to_dot(graph).splitlines() if "print" in line)
    quoted = re.search(r'label=("(?:[^"\\]|\\.)*")', line).group(1)
    unescaped = re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1),
                       quoted[1:-1])
    assert unescaped == "%p = print\n" + "sep='\"\\\\'"


def test_render_without_graphviz(samples, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setattr(dot_module.shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="apt-get install graphviz"):
        render(samples.straight_line(), tmp_path / "g.svg")
    with pytest.raises(ValueError, match="'svg' or 'png'"):
        render(samples.straight_line(), tmp_path / "g.pdf", fmt="pdf")


def test_render_runs_dot(samples, monkeypatch, tmp_path: Path) -> None:
    fake = tmp_path / "bin" / "dot"   # stands in for Graphviz: records its argv and input
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\necho "$@" > "$3.args"\ncat > "$3"\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    out = render(samples.if_in_while(), tmp_path / "g.png", fmt="png")
    assert out == tmp_path / "g.png"
    assert out.read_text() == to_dot(samples.if_in_while())
    assert Path(f"{out}.args").read_text().split() == ["-Tpng", "-o", str(out)]
    fake.write_text("#!/bin/sh\necho 'syntax error' >&2\nexit 3\n")
    with pytest.raises(RuntimeError, match="dot failed \\(exit 3\\): syntax error"):
        render(samples.if_in_while(), tmp_path / "h.svg")
