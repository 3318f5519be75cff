"""docs/mindspore-training.md: every ```python block runs as written (each in a fresh
namespace)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "mindspore-training.md"
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)


def test_the_page_has_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_example_runs(index, capsys):
    exec(compile(BLOCKS[index], f"{PAGE.name}[{index}]", "exec"), {"__name__": "docs_example"})
