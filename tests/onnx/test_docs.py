"""docs/onnx.md's Python examples run as written: each as a file (amber reads source), run in a
fresh directory (the export example writes its model there)."""
from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "onnx.md"
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)


@pytest.mark.parametrize("k", range(len(BLOCKS)))
def test_example_runs(k, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    script = tmp_path / f"onnx_doc_{k}.py"
    script.write_text(BLOCKS[k])
    runpy.run_path(str(script), run_name=f"onnx_doc_{k}")
