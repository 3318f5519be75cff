"""The documentation runs: every ```python block of the README and of each page under docs/ is
executed, page by page (a page's blocks in order, in one module, from a file so amber can read
their source), in a scratch directory with `samples/` importable; a block marked
```python fragment (an excerpt of generated code, or a snippet naming the reader's own files)
must at least parse. Every relative link between the pages leads to a file that exists, and a
link to a section of a page (`page.md#anchor`, `#anchor`) to a heading of that page. Every page
can be reached from the README by following links."""
from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import re
import sys
import textwrap
from pathlib import Path

import pytest

from amber.runtime import reset_context

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```", re.S | re.M)
LINK = re.compile(r"\]\(([^)#\s]+)(#[^)\s]*)?\)")
HEADING = re.compile(r"^#{1,6} +(.+?) *$", re.M)


def blocks(page: Path) -> list[tuple[str, str, int]]:
    """(info string, code, first line) of each fenced block of `page`."""
    text = page.read_text(encoding="utf-8")
    return [(m[1].strip(), m[2], text.count("\n", 0, m.start()) + 2) for m in FENCE.finditer(text)]


def _id(page: Path) -> str:
    return str(page.relative_to(ROOT))


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_python_blocks_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runnable = [(code, line) for info, code, line in blocks(page) if info == "python"]
    for info, code, line in blocks(page):
        if info == "python fragment":
            ast.parse(textwrap.dedent(code), filename=f"{page.name}:{line}")
    if not runnable:
        return
    # NOTE: one module per page, each block at its own line of the page (tracebacks say where)
    lines: list[str] = []
    for code, line in runnable:
        lines += [""] * (line - 1 - len(lines)) + code.splitlines()
    path = tmp_path / f"doc_{page.stem.replace('-', '_').lower()}.py"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT / "samples"))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
        reset_context()


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_links_lead_somewhere(page: Path) -> None:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    for target, _ in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # NOTE: an absolute URL; the pages link to none today
        assert (page.parent / target).exists(), f"{_id(page)} links to missing {target}"


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives the headings of `page`: lower case, punctuation dropped, spaces
    as hyphens, a repeated heading suffixed -1, -2, ..."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for title in HEADING.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
        slug = re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
        found.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
        seen[slug] = seen.get(slug, 0) + 1
    return found


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_section_links_lead_to_a_heading(page: Path) -> None:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    for target, anchor in re.findall(r"\]\(([^)#\s]*)(#[^)\s]+)\)", text):
        dest = page.parent / target if target else page
        if re.match(r"[a-z]+:", target) or dest.suffix != ".md" or not dest.exists():
            continue  # NOTE: a URL, or a missing page test_links_lead_somewhere reports
        assert anchor[1:] in anchors(dest), \
            f"{_id(page)} links to {target}{anchor}: no such heading"


def test_every_page_is_reachable_from_the_readme() -> None:
    reached, todo = set(), [ROOT / "README.md"]
    while todo:  # NOTE: a page linked from a linked page counts (the history from its topic page)
        page = todo.pop()
        text = FENCE.sub("", page.read_text(encoding="utf-8"))
        for target, _ in LINK.findall(text):
            dest = (page.parent / target).resolve()
            if dest.suffix == ".md" and dest.exists() and dest not in reached:
                reached.add(dest)
                todo.append(dest)
    missing = [p.name for p in PAGES[1:] if p.resolve() not in reached]
    assert not missing, f"docs pages no link from the README leads to: {missing}"
