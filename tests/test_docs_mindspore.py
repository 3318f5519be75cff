"""Every ```python block of docs/mindspore.md runs (each in a fresh namespace, in order)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import amber
from amber.runtime import reset_context

PAGE = Path(__file__).resolve().parent.parent / "docs" / "mindspore.md"
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)


@pytest.mark.filterwarnings("ignore:.*cannot be kept in the disk cache")
@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_block_runs(index):
    try:
        exec(compile(BLOCKS[index], f"{PAGE}:block{index}", "exec"), {"__name__": "__doc__"})
    finally:
        reset_context()
    assert amber.get_context("mode") == amber.PYNATIVE_MODE
