"""ONNX export and the onnxruntime backend: these tests need the `onnx` extra (onnx and
onnxruntime, in the `test` extra too); without them they are skipped, saying so."""
from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np
import pytest

HAS_ONNX = all(importlib.util.find_spec(m) is not None for m in ("onnx", "onnxruntime"))
sys.path.insert(0, os.path.dirname(__file__))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if HAS_ONNX:
        return
    skip = pytest.mark.skip(reason="ONNX export needs onnx and onnxruntime "
                                   "(pip install -e '.[onnx]')")
    for item in items:
        if "tests/onnx/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(skip)


NUMPY_1 = int(np.__version__.split(".")[0]) < 2
collect_ignore = [] if HAS_ONNX else ["test_corpus.py", "test_random.py"]
if NUMPY_1:  # NOTE: a smoke subset under NumPy 1 (CI time): no subprocesses, no hypothesis
    collect_ignore += ["test_processes.py", "test_random.py"]


@pytest.fixture(autouse=True, scope="module")
def no_disk_cache() -> None:
    """Compile afresh (an entry of another compiler version must not answer)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AMBER_CACHE", "0")
        yield
