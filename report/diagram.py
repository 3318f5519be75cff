"""The control-flow diagram of one compiled function, as inline SVG: the graph body as a box,
each If/While/For region as a box inside the block holding it, its blocks (then/else, cond/body)
side by side, with the number of plain operations in each block.

A plain nested-box layout computed here, so the report needs no Graphviz and no script to draw.
Each region box carries the source line it came from (`data-key`), which the page links to the
source pane like any other line.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from typing import Any

PAD = 8
HEADER = 18
GAP = 8
MIN_BLOCK_WIDTH = 90
CHAR_WIDTH = 6.8
"""Width of one character of the 11px monospace labels (an estimate: no font metrics here)."""
COLORS = {"if": "#fde9c9", "while": "#d7eafc", "for": "#dcf5dc", "body": "#f6f6f6"}


@dataclass
class Box:
    """A laid-out block or region: its size, its children's offsets, and what to draw."""
    kind: str
    label: str
    key: str = ""
    width: float = 0.0
    height: float = 0.0
    children: list[tuple[float, float, "Box"]] = field(default_factory=list)
    note: str = ""


def region_diagram(tree: dict[str, Any], files: dict[str, str]) -> str:
    """SVG for a `describe_regions` tree; `files` shortens file paths for labels."""
    root = _block(tree, files)
    width, height = root.width + 2, root.height + 2
    parts = [f'<svg class="regions" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" '
             f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" role="img" '
             f'aria-label="control-flow regions">']
    _draw(root, 1, 1, parts)
    parts.append("</svg>")
    return "".join(parts)


def _text_width(text: str) -> float:
    return len(text) * CHAR_WIDTH + 2 * PAD


def _block(block: dict[str, Any], files: dict[str, str]) -> Box:
    box = Box("body" if block["role"] == "body" else "block", block["role"],
              note=f"{block['ops']} op" + ("" if block["ops"] == 1 else "s"))
    y = HEADER + 4
    width = max(MIN_BLOCK_WIDTH, _text_width(f"{box.label}  {box.note}"))
    for region in block["regions"]:
        child = _region(region, files)
        box.children.append((PAD, y, child))
        y += child.height + GAP
        width = max(width, child.width + 2 * PAD)
    box.width, box.height = width, y + (PAD if block["regions"] else 0)
    return box


def _region(region: dict[str, Any], files: dict[str, str]) -> Box:
    loc = region["loc"][-1] if region["loc"] else None
    user = _user_loc(region["loc"], files)
    where = f"{files.get(user[0], user[0])}:{user[1]}" if user else ""
    text = region.get("text", "")
    label = f"{region['kind']}  {where}" + (f"  {text}" if text else "")
    box = Box(region["kind"], label, key=f"{loc[0]}:{loc[1]}" if loc else "")
    x = PAD
    height = 0.0
    for block in region["blocks"]:
        child = _block(block, files)
        box.children.append((x, HEADER + 4, child))
        x += child.width + GAP
        height = max(height, child.height)
    box.width = max(x - GAP + PAD, _text_width(label))
    box.height = HEADER + 4 + height + PAD
    return box


def _user_loc(chain: list[list[Any]], files: dict[str, str]) -> list[Any] | None:
    """The outermost location of a chain in a file the report shows (the user's line)."""
    shown = [loc for loc in chain if loc[0] in files]
    return shown[-1] if shown else (chain[-1] if chain else None)


def _draw(box: Box, x: float, y: float, parts: list[str]) -> None:
    fill = COLORS.get(box.kind, "#ffffff")
    key = f' data-key="{escape(box.key)}"' if box.key else ""
    cls = "region" if box.kind in ("if", "while", "for") else "block"
    parts.append(f'<g class="{cls}"{key}><rect x="{x:.1f}" y="{y:.1f}" width="{box.width:.1f}" '
                 f'height="{box.height:.1f}" rx="4" fill="{fill}" stroke="#888"/>')
    label = box.label if cls == "region" else f"{box.label}  {box.note}"
    parts.append(f'<text x="{x + PAD:.1f}" y="{y + 13:.1f}">{escape(label)}</text></g>')
    for dx, dy, child in box.children:
        _draw(child, x + dx, y + dy, parts)
